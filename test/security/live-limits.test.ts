/**
 * One token must not open unbounded live subscriptions (each is a poller, a connection and a
 * stream): at most LIVE_MAX_PER_CALLER at once; one more is refused with RATE_LIMITED, other
 * callers are unaffected, and a stream that ends frees its place.
 */
import { type Client, createClient, type ExecutionResult } from 'graphql-sse';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
const clients: Client[] = [];

beforeAll(async () => {
  // Pending payments that stay pending for the whole test.
  sandbox = await startSandbox({ pendingSeconds: 60 });
  gateway = await startGateway(sandboxUpstreams(sandbox), {
    LIVE_POLL_MS: '1000',
    LIVE_MAX_PER_CALLER: '3',
  });
});
afterEach(() => {
  while (clients.length > 0) clients.pop()?.dispose();
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

const STATUS = 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { status } }';

/** Starts a subscription; resolves once its first event (or error) arrived. */
function open(token: string, txRef: string) {
  const client = createClient({
    url: `${gateway.url}/graphql`,
    retryAttempts: 0,
    headers: { authorization: `Bearer ${token}` },
  });
  clients.push(client);
  let stop: () => void = () => {};
  const first = new Promise<{ result?: ExecutionResult; error?: unknown }>((resolve) => {
    stop = client.subscribe(
      { query: STATUS, variables: { txRef } },
      {
        next: (result) => resolve({ result: result as ExecutionResult }),
        error: (error) => resolve({ error }),
        complete: () => resolve({}),
      },
    );
  });
  return { first, stop: () => stop() };
}

it('refuses the caller its fourth live subscription with RATE_LIMITED, and no one else', async () => {
  const token = await gateway.token({ sub: 'live-caller' });
  const held = [1, 2, 3].map((i) => open(token, `NT-PENDINGLIVE${i}`));
  for (const stream of held) {
    expect((await stream.first).result?.data).toEqual({ transactionStatus: { status: 'PENDING' } });
  }
  const fourth = await open(token, 'NT-PENDINGLIVE4').first;
  expect(JSON.stringify(fourth)).toContain('RATE_LIMITED');

  const someoneElse = await open(await gateway.token({ sub: 'other' }), 'NT-PENDINGLIVE5').first;
  expect(someoneElse.result?.data).toEqual({ transactionStatus: { status: 'PENDING' } });

  // A stream that ends frees its place.
  held[0]?.stop();
  let again: { result?: ExecutionResult; error?: unknown } = {};
  for (let attempt = 0; attempt < 50; attempt++) {
    again = await open(token, 'NT-PENDINGLIVE6').first;
    if (again.result) break;
    // The server learns that the stream ended when its connection closes.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(again.result?.data).toEqual({ transactionStatus: { status: 'PENDING' } });
});
