/**
 * WebSocket clients (`graphql-transport-ws`, the graphql-ws library's own client) on `/graphql`:
 * the same token rules, limits, error codes and live hub as the HTTP transports.
 */
import { type Client, createClient } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
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
afterEach(async () => {
  while (clients.length > 0) await clients.pop()?.dispose();
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

/** A client on the gateway's /graphql, with `authorization` in the connection parameters. */
function connect(token: string | null, onClose?: (code: number) => void): Client {
  const client = createClient({
    url: `${gateway.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    connectionParams: token === null ? {} : { authorization: `Bearer ${token}` },
    on: { closed: (event) => onClose?.((event as { code: number }).code) },
  });
  clients.push(client);
  return client;
}

const STATUS = 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { txRef status } }';

it('follows a pending payment to SUCCESSFUL, then completes', async () => {
  const txRef = `NT-PENDING${Date.now()}`;
  const { results, error } = await collect(connect(await gateway.token()), STATUS, { txRef });
  expect(error).toBeUndefined();
  expect(results.map((r) => r.data)).toEqual([
    { transactionStatus: { txRef, status: 'PENDING' } },
    { transactionStatus: { txRef, status: 'SUCCESSFUL' } },
  ]);
});

it('answers queries too', async () => {
  const { results } = await collect(
    connect(await gateway.token()),
    '{ transaction(txRef: "NT-SUCCESS001") { status } }',
  );
  expect(results).toEqual([{ data: { transaction: { status: 'SUCCESSFUL' } } }]);
});

it('closes a connection without a valid token before any operation runs', async () => {
  for (const token of [null, 'not-a-jwt']) {
    const before = sandbox.requests.length;
    let closedWith: number | undefined;
    const { results, error } = await collect(
      connect(token, (code) => {
        closedWith = code;
      }),
      '{ transaction(txRef: "NT-SUCCESS001") { status } }',
    );
    expect(results).toEqual([]);
    expect(error).toBeDefined();
    expect(closedWith).toBe(4403);
    expect(sandbox.requests.length).toBe(before);
  }
});

it("applies the same rules: an end user's token reads no payment outside its claim", async () => {
  const endUser = await gateway.token({ sub: 'usr_ws', scope: null, txRefs: ['NT-SUCCESS001'] });
  const client = connect(endUser);
  const other = await collect(client, STATUS, { txRef: 'NT-FAILED001' });
  const codes = JSON.stringify(other.results.length > 0 ? other.results : other.error);
  expect(codes).toContain('FORBIDDEN');
  const own = await collect(client, '{ transaction(txRef: "NT-SUCCESS001") { status } }');
  expect(own.results).toEqual([{ data: { transaction: { status: 'SUCCESSFUL' } } }]);
});

it('applies the same limits, with the contract codes', async () => {
  const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ');
  const { results, error } = await collect(connect(await gateway.token()), `{ ${aliases} }`);
  const shown = JSON.stringify(results.length > 0 ? results : error);
  expect(shown).toContain('GRAPHQL_VALIDATION_FAILED');
});

it('closes 50 connections that never present a token within the init timeout, and one over the size limit', async () => {
  const url = `${gateway.url.replace('http', 'ws')}/graphql`;
  const started = Date.now();
  const codes = await Promise.all(
    Array.from(
      { length: 50 },
      () =>
        new Promise<number>((resolve) => {
          const socket = new WebSocket(url, 'graphql-transport-ws');
          socket.on('close', (code) => resolve(code));
          socket.on('error', () => {});
        }),
    ),
  );
  expect(new Set(codes)).toEqual(new Set([4408]));
  expect(Date.now() - started).toBeLessThan(10_000);

  const big = await new Promise<number>((resolve) => {
    const socket = new WebSocket(url, 'graphql-transport-ws');
    socket.on('open', () => socket.send('x'.repeat(2 * 1024 * 1024)));
    socket.on('close', (code) => resolve(code));
    socket.on('error', () => {});
  });
  expect(big).toBe(1009);
});

const KYC_STATUS = 'subscription($u: ID!) { kycStatus(userRef: $u) { userRef level verified } }';

it("follows the user's own KYC (kycStatus) by polling when no notification comes; another user's is FORBIDDEN", async () => {
  const userRef = `usr_ws_kyc_${Date.now()}`;
  sandbox.kyc.recordLevel(userRef, 'tier_1', [{ name: 'gender' }, { name: 'name' }]);
  const own = connect(await gateway.token({ sub: userRef, scope: null }));
  const seen: unknown[] = [];
  const iterator = own.iterate({ query: KYC_STATUS, variables: { u: userRef } });
  for await (const result of iterator) {
    seen.push(result.data ?? result.errors);
    if (seen.length === 1) {
      // The KYC service decides later; the gateway polls it (every 200 ms here).
      sandbox.kyc.recordLevel(userRef, 'tier_2', [{ name: 'bvn' }, { name: 'dob' }]);
    }
    if (seen.length === 2) break;
  }
  expect(seen).toEqual([
    { kycStatus: { userRef, level: 1, verified: false } },
    { kycStatus: { userRef, level: 2, verified: false } },
  ]);

  const before = sandbox.requests.length;
  const other = connect(await gateway.token({ sub: 'usr_ws_other', scope: null }));
  // Refused when the stream starts (the resolver's access rule): as for transactionStatus, a
  // `next` message with the contract's code, then `complete` (graphql-ws keeps `error` messages for
  // refusals before execution); either way, exactly that one code and no record.
  type Coded = { extensions?: { code?: unknown } };
  const codes = ({
    results,
    error,
  }: {
    results: { data?: unknown; errors?: Coded[] }[];
    error?: unknown;
  }) => {
    expect(results.every((result) => result.data == null)).toBe(true);
    const errors = results.length > 0 ? results.flatMap((r) => r.errors ?? []) : (error as Coded[]);
    return errors?.map((e) => e.extensions?.code);
  };
  expect(codes(await collect(other, KYC_STATUS, { u: userRef }))).toEqual(['FORBIDDEN']);
  // An unknown user: BAD_USER_INPUT (the first read is the only call).
  const stranger = connect(await gateway.token({ sub: 'usr_ws_nobody', scope: null }));
  expect(codes(await collect(stranger, KYC_STATUS, { u: 'usr_ws_nobody' }))).toEqual([
    'BAD_USER_INPUT',
  ]);
  expect(sandbox.requests.length - before).toBe(1);
});
