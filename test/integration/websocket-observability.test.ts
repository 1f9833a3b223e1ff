/**
 * An operation over WebSocket leaves the same trace as one over HTTP: one `graphql request` log
 * line with its own request id, its operation type and name and its outcome, and the request
 * counter and duration histograms.
 */
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';
import { collect } from '../helpers/subscriptions.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
let client: Client;
const logLines: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ pendingSeconds: 1 });
  gateway = await startGateway(sandboxUpstreams(sandbox), { LIVE_POLL_MS: '200' }, { logLines });
  const token = await gateway.token();
  client = createClient({
    url: `${gateway.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  });
});
afterAll(async () => {
  await client.dispose();
  await gateway.close();
  await sandbox.close();
});

interface RequestLine {
  msg: string;
  requestId: string;
  transport: string;
  operation: string;
  operationType?: string;
  status: number;
  durationMs: number;
  errorCodes: string[];
}

const requestLines = (): RequestLine[] =>
  logLines
    .map((line) => JSON.parse(line) as RequestLine)
    .filter((line) => line.msg === 'graphql request' && line.transport === 'websocket');

it('logs and counts a query, a subscription and a refused operation', async () => {
  const requests = () => metric(gateway, 'gateway_graphql_requests_total');
  const before = {
    requests: await requests(),
    errors: await metric(gateway, 'gateway_graphql_requests_total', { outcome: 'error' }),
    queries: await metric(gateway, 'gateway_graphql_request_duration_seconds_count', {
      operation_type: 'query',
    }),
    subscriptions: await metric(gateway, 'gateway_graphql_subscription_duration_seconds_count'),
  };

  const query = await collect(
    client,
    'query WsQuery { transaction(txRef: "NT-SUCCESS001") { status } }',
  );
  expect(query.results).toEqual([{ data: { transaction: { status: 'SUCCESSFUL' } } }]);
  const txRef = `NT-PENDING${Date.now()}WS`;
  const subscription = await collect(
    client,
    'subscription WsStatus($txRef: ID!) { transactionStatus(txRef: $txRef) { status } }',
    { txRef },
  );
  expect(subscription.results).toHaveLength(2);
  const refused = await collect(client, 'query WsBroken { transaction(txRef: ');
  expect(refused.error).toBeDefined();

  const lines = requestLines();
  expect(lines).toHaveLength(3);
  const [queried, subscribed, broken] = lines as [RequestLine, RequestLine, RequestLine];
  expect(queried).toMatchObject({ operationType: 'query', status: 200, errorCodes: [] });
  expect(subscribed).toMatchObject({ operationType: 'subscription', status: 200, errorCodes: [] });
  expect(broken).toMatchObject({ status: 400, errorCodes: ['GRAPHQL_PARSE_FAILED'] });
  // Each operation its own request id; the subscription lasted until its final status.
  expect(new Set(lines.map((line) => line.requestId)).size).toBe(3);
  for (const line of lines) expect(line.requestId).toMatch(/^[0-9a-f-]{36}$/);
  expect(subscribed.durationMs).toBeGreaterThan(queried.durationMs);

  expect((await requests()) - before.requests).toBe(3);
  expect(
    (await metric(gateway, 'gateway_graphql_requests_total', { outcome: 'error' })) - before.errors,
  ).toBe(1);
  expect(
    (await metric(gateway, 'gateway_graphql_request_duration_seconds_count', {
      operation_type: 'query',
    })) - before.queries,
  ).toBe(1);
  expect(
    (await metric(gateway, 'gateway_graphql_subscription_duration_seconds_count')) -
      before.subscriptions,
  ).toBe(1);
});
