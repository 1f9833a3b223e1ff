/**
 * The graphql-sse client in both of its modes against `/graphql`: distinct connections (one
 * stream per operation) and single connection (one reserved stream, operations bearing its
 * token). Same token rules in both.
 */
import { type Client, createClient } from 'graphql-sse';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { collect } from '../helpers/subscriptions.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
const clients: Client[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ pendingSeconds: 1 });
  gateway = await startGateway(sandboxUpstreams(sandbox), { LIVE_POLL_MS: '200' });
});
afterEach(() => {
  while (clients.length > 0) clients.pop()?.dispose();
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

function connect(singleConnection: boolean, token: string | null): Client {
  const client = createClient({
    url: `${gateway.url}/graphql`,
    singleConnection,
    retryAttempts: 0,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  clients.push(client);
  return client;
}

const STATUS = 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { txRef status } }';

describe.each([
  ['distinct connections', false],
  ['a single connection', true],
])('graphql-sse over %s', (_mode, single) => {
  it('follows a pending payment to SUCCESSFUL, then completes', async () => {
    const txRef = `NT-PENDING${Date.now()}${single ? 1 : 0}`;
    const { results, error } = await collect(connect(single, await gateway.token()), STATUS, {
      txRef,
    });
    expect(error).toBeUndefined();
    expect(results.map((r) => r.data)).toEqual([
      { transactionStatus: { txRef, status: 'PENDING' } },
      { transactionStatus: { txRef, status: 'SUCCESSFUL' } },
    ]);
  });

  it('runs two operations at once on one client', async () => {
    const client = connect(single, await gateway.token());
    const [a, b] = await Promise.all([
      collect(client, '{ transaction(txRef: "NT-SUCCESS001") { status } }'),
      collect(client, '{ transaction(txRef: "NT-FAILED001") { status } }'),
    ]);
    expect(a.results).toEqual([{ data: { transaction: { status: 'SUCCESSFUL' } } }]);
    expect(b.results).toEqual([{ data: { transaction: { status: 'FAILED' } } }]);
  });

  it('refuses a caller without a token, with no upstream call', async () => {
    const before = sandbox.requests.length;
    const { results, error } = await collect(connect(single, null), STATUS, {
      txRef: 'NT-PENDING1',
    });
    expect(results).toEqual([]);
    expect(String(error)).toMatch(/401|UNAUTHENTICATED|Unauthorized/i);
    expect(sandbox.requests.length).toBe(before);
  });
});

/**
 * Reads an event stream answered to a GET (the operation in the query string, `Accept:
 * text/event-stream` only, as routers such as Hive Gateway subscribe to a subgraph) to its end.
 */
async function streamOverGet(
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<{ status: number; events: { event: string; data: string }[] }> {
  const search = new URLSearchParams({ query });
  if (variables) search.set('variables', JSON.stringify(variables));
  const response = await fetch(`${gateway.url}/graphql?${search}`, {
    headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` },
  });
  const text = await response.text();
  const events = text
    .split('\n\n')
    .filter((block) => block.startsWith('event:'))
    .map((block) => {
      const [event = '', data = ''] = block.split('\n');
      return { event: event.slice('event: '.length), data: data.slice('data: '.length) };
    });
  return { status: response.status, events };
}

describe('graphql-sse distinct connections over GET', () => {
  it('streams a subscription', async () => {
    const txRef = `NT-PENDING${Date.now()}GET`;
    const { status, events } = await streamOverGet(await gateway.token(), STATUS, { txRef });
    expect(status).toBe(200);
    expect(events).toEqual([
      {
        event: 'next',
        data: JSON.stringify({ data: { transactionStatus: { txRef, status: 'PENDING' } } }),
      },
      {
        event: 'next',
        data: JSON.stringify({ data: { transactionStatus: { txRef, status: 'SUCCESSFUL' } } }),
      },
      { event: 'complete', data: '' },
    ]);
  });

  it('runs a query and a mutation', async () => {
    const token = await gateway.token();
    const query = await streamOverGet(token, '{ transaction(txRef: "NT-SUCCESS001") { status } }');
    expect(query.events.map((e) => e.event)).toEqual(['next', 'complete']);
    expect(JSON.parse(query.events[0]?.data ?? '')).toEqual({
      data: { transaction: { status: 'SUCCESSFUL' } },
    });
    const mutation = await streamOverGet(
      token,
      'mutation($order: OrderInput!) { confirmPayment(txRef: "NT-FAILED001", order: $order) { confirmed } }',
      { order: { id: 'order-get-1', amount: '1', currency: 'NGN' } },
    );
    expect(mutation.status).toBe(200);
    expect(JSON.parse(mutation.events[0]?.data ?? '')).toMatchObject({
      data: { confirmPayment: { confirmed: false } },
    });
  });

  it('a mutation over a GET that also accepts JSON is still refused (405)', async () => {
    const search = new URLSearchParams({
      query:
        'mutation { confirmPayment(txRef: "NT-FAILED001", order: {id: "o", amount: "1", currency: "NGN"}) { confirmed } }',
    });
    const response = await fetch(`${gateway.url}/graphql?${search}`, {
      headers: {
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${await gateway.token()}`,
      },
    });
    expect(response.status).toBe(405);
  });
});
