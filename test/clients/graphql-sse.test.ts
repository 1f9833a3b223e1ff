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
