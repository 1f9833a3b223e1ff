/**
 * One caller must not make the gateway hammer the upstream or starve other callers: at most
 * MAX_RECORDS_PER_REQUEST distinct records per request whatever the aliases, a bounded share of
 * upstream concurrency per caller, calls of requests whose clients have gone never made (over
 * HTTP and WebSocket, waiting in the caller's share or in the upstream's shared queue), and a
 * brief memory of unknown references.
 */
import { request as httpRequest } from 'node:http';
import { type Client, createClient } from 'graphql-ws';
import { afterEach, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { SettingsEnv } from '../../src/settings.ts';
import { until } from '../helpers/eventually.ts';
import { transactionBody } from '../helpers/fixture.ts';
import { byRef, type FixtureSetup, setup } from '../helpers/fixture-gateway.ts';
import { codesOf, gql, type TestGateway } from '../helpers/gateway.ts';

const clients: Client[] = [];
afterEach(async () => {
  while (clients.length > 0) await clients.pop()?.dispose();
});

const fanOut = (prefix: string) =>
  `{ ${Array.from(
    { length: 20 },
    (_, a) =>
      `t${a}: transactions(txRefs: [${Array.from({ length: 100 }, (_, r) => `"NT-${prefix}${a}X${r}"`).join(', ')}]) { txRef }`,
  ).join(' ')} }`;

it('20 aliases × 100 references make at most MAX_RECORDS_PER_REQUEST upstream calls', async () => {
  // Every call is counted: none may time out (and be retried) on a busy machine.
  const { payment, gateway, token } = await setup(byRef, { env: { UPSTREAM_TIMEOUT_MS: '10000' } });
  const response = await gql(gateway, fanOut('FAN'), {}, token);
  expect(payment.requests.length).toBe(100);
  const codes = codesOf(response);
  expect(codes).toHaveLength(1900);
  expect(new Set(codes)).toEqual(new Set(['BAD_USER_INPUT']));
  expect(JSON.stringify(response.errors?.[0])).toMatch(/more than 100 distinct records/);
});

it("three such requests at once leave another caller's query served, and keep each caller within its share", async () => {
  let inFlight = 0;
  let most = 0;
  const { payment, gateway } = await setup(
    (request) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight -= 1;
      }, 20);
      return { body: transactionBody({ paymentRef: request.path.split('/').pop() }), delayMs: 20 };
    },
    {
      env: {
        UPSTREAM_MAX_CONCURRENT_PER_CALLER: '4',
        SERVICE_UPSTREAM_MAX_CONCURRENT_PER_CALLER: '8',
        UPSTREAM_TIMEOUT_MS: '5000',
      },
    },
  );
  const greedy = await gateway.token({ sub: 'greedy' });
  const other = await gateway.token({ sub: 'other' });
  const attacks = [0, 1, 2].map((i) => gql(gateway, fanOut(`G${i}`), {}, greedy));
  const victim = await gql(gateway, '{ transaction(txRef: "NT-VICTIM1") { txRef } }', {}, other);
  expect(victim.errors).toBeUndefined();
  expect(victim.data).toEqual({ transaction: { txRef: 'NT-VICTIM1' } });
  await Promise.all(attacks);
  // The greedy caller's 300 calls ran at most 8 at a time; the victim's took its own slot.
  expect(most).toBeLessThanOrEqual(9);
  expect(payment.requests.length).toBe(301);
});

/** `a`…: aliases of `transactions`, each of 20 references `NT-<prefix><alias>X<n>`. */
const records = (prefix: string, aliases: number) =>
  `{ ${Array.from(
    { length: aliases },
    (_, a) =>
      `t${a}: transactions(txRefs: [${Array.from({ length: 20 }, (_, r) => `"NT-${prefix}${a}X${r}"`).join(', ')}]) { txRef }`,
  ).join(' ')} }`;

/**
 * Posts `query` on a connection of its own; `sent` resolves once the request has been written,
 * and `leave` closes the connection (before any answer).
 */
function leaving(
  gateway: TestGateway,
  query: string,
  token: string,
): { sent: Promise<void>; leave: () => void } {
  const request = httpRequest(`${gateway.url}/graphql`, {
    method: 'POST',
    agent: false,
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${token}`,
    },
  });
  request.on('error', () => {});
  const sent = new Promise<void>((resolve) => request.end(JSON.stringify({ query }), resolve));
  return { sent, leave: () => request.destroy() };
}

/** Two calls in flight per caller and 38 in its queue: a request of 40 records fills both. */
const CALLER_SHARE = {
  SERVICE_UPSTREAM_MAX_CONCURRENT_PER_CALLER: '2',
  UPSTREAM_MAX_QUEUED_PER_CALLER: '38',
};

/**
 * A gateway whose service holds the answers for `NT-GONE…` until `release`, with the limits of
 * `limits` (the caller's share, unless told).
 */
async function holdingGone(
  limits: SettingsEnv = CALLER_SHARE,
): Promise<
  FixtureSetup & { release: () => void; requestLines: () => number; asked: () => string[] }
> {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const logLines: string[] = [];
  const fixture = await setup(
    (request) => {
      const txRef = request.path.split('/').pop();
      return {
        body: transactionBody({ paymentRef: txRef }),
        // The calls of the requests that leave stay in flight until the test releases them.
        ...(txRef?.startsWith('NT-GONE') && { until: held }),
      };
    },
    {
      env: {
        ...limits,
        // Held calls must not time out (and be retried) on a busy machine.
        UPSTREAM_TIMEOUT_MS: '30000',
      },
      logLines,
    },
  );
  return {
    ...fixture,
    release,
    requestLines: () => logLines.filter((line) => line.includes('"graphql request"')).length,
    asked: () => fixture.payment.requests.map((request) => request.path.split('/').pop() ?? ''),
  };
}

/**
 * Once the requests for `NT-GONE…` have gone: a request for 20 new records of the same caller is
 * served in full (asked before the held calls end: the queue holds nothing of the gone ones;
 * `after`: once they have ended), and of the gone ones only the two calls that were in flight
 * were made.
 */
async function expectGoneDropped(
  fixture: Awaited<ReturnType<typeof holdingGone>>,
  prefix: string,
  after = false,
): Promise<void> {
  if (after) {
    fixture.release();
    // A read of the two held records ends once their calls have.
    const held = fixture.asked().map((txRef) => `"${txRef}"`);
    await gql(
      fixture.gateway,
      `{ transactions(txRefs: [${held.join(', ')}]) { txRef } }`,
      {},
      fixture.token,
    );
  }
  const next = gql(fixture.gateway, records(prefix, 1), {}, fixture.token);
  fixture.release();
  const response = await next;
  expect(response.errors).toBeUndefined();
  expect((response.data as { t0: unknown[] }).t0).toHaveLength(20);
  const asked = fixture.asked();
  expect(asked.filter((txRef) => txRef.startsWith('NT-GONE'))).toHaveLength(2);
  expect(asked.filter((txRef) => txRef.startsWith(`NT-${prefix}`))).toHaveLength(20);
  expect(asked).toHaveLength(22);
}

it("calls waiting for requests whose clients have gone are never made, and leave the caller's queue to its next requests", async () => {
  const fixture = await holdingGone();
  const { payment, gateway, token, requestLines } = fixture;
  // 40 records: 2 calls in flight, 38 in the caller's queue, which is then full.
  const first = leaving(gateway, records('GONE', 2), token);
  await until(() => payment.requests.length === 2, 5000);
  // Another request for the same records waits for the same calls (single flight).
  const second = leaving(gateway, records('GONE', 2), token);
  await second.sent;
  first.leave();
  second.leave();
  // Each request's line is written when its connection closes, as its signal aborts.
  await until(() => requestLines() === 2, 5000);
  // The two calls in flight were made; the 38 that waited were not.
  await expectGoneDropped(fixture, 'NEXT');
});

it("calls waiting in the upstream's shared queue for requests whose clients have gone are never made", async () => {
  // Two calls in flight for the whole upstream, 38 in its queue; the caller's share is larger.
  const fixture = await holdingGone({ UPSTREAM_MAX_CONCURRENT: '2', UPSTREAM_MAX_QUEUED: '38' });
  const { payment, gateway, token, requestLines } = fixture;
  const first = leaving(gateway, records('GONE', 2), token);
  await until(() => payment.requests.length === 2, 5000);
  first.leave();
  await until(() => requestLines() === 1, 5000);
  // Each keeps its place in the queue until its turn, which comes once the held calls end.
  await expectGoneDropped(fixture, 'BULKNEXT', true);
});

it.each([
  ["its caller's queue", { SERVICE_UPSTREAM_MAX_CONCURRENT_PER_CALLER: '2' }],
  ["the upstream's shared queue", { UPSTREAM_MAX_CONCURRENT: '2' }],
])(
  'a call that waited in %s is made as its own request, not as the one whose call made way',
  async (_, limits) => {
    // The answers for NT-HOLDA and NT-HOLDB wait until the test releases each.
    const releases = new Map<string, () => void>();
    const holds = new Map(
      ['NT-HOLDA', 'NT-HOLDB'].map((txRef) => [
        txRef,
        new Promise<void>((resolve) => releases.set(txRef, resolve)),
      ]),
    );
    const { payment, gateway, token } = await setup(
      (request) => {
        const txRef = request.path.split('/').pop() ?? '';
        const hold = holds.get(txRef);
        return { body: transactionBody({ paymentRef: txRef }), ...(hold && { until: hold }) };
      },
      { env: { ...limits, UPSTREAM_TIMEOUT_MS: '30000' } },
    );
    const send = (txRefs: string[], id: string) =>
      gql<{ transactions: Array<{ txRef: string }> }, Record<string, never>>(
        gateway,
        `{ transactions(txRefs: [${txRefs.map((txRef) => `"${txRef}"`).join(', ')}]) { txRef } }`,
        {},
        token,
        { 'x-request-id': id },
      );
    const first = send(['NT-HOLDA'], 'req-first');
    await until(() => payment.requests.length === 1, 5000);
    // The second request's first call takes the last slot; its second call waits for one.
    const second = send(['NT-HOLDB', 'NT-WAITED'], 'req-second');
    await until(() => payment.requests.length === 2, 5000);
    // The first request's call ends and hands its slot to the call that waited.
    releases.get('NT-HOLDA')?.();
    expect((await first).status).toBe(200);
    await until(() => payment.requests.length === 3, 5000);
    releases.get('NT-HOLDB')?.();
    expect((await second).data?.transactions.map((record) => record.txRef)).toEqual([
      'NT-HOLDB',
      'NT-WAITED',
    ]);
    const sentWith = Object.fromEntries(
      payment.requests.map((request) => [
        request.path.split('/').pop(),
        request.headers['x-request-id'],
      ]),
    );
    expect(sentWith).toEqual({
      'NT-HOLDA': 'req-first',
      'NT-HOLDB': 'req-second',
      'NT-WAITED': 'req-second',
    });
  },
);

/**
 * A graphql-ws client (the library's own) on the gateway's /graphql with `token`; its socket
 * stays open between operations until `dispose`, and `closes` counts its closings.
 */
function overWebSocket(gateway: TestGateway, token: string): { client: Client; closes: number[] } {
  const closes: number[] = [];
  const client = createClient({
    url: `${gateway.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    lazyCloseTimeout: 60_000,
    connectionParams: { authorization: `Bearer ${token}` },
    on: { closed: () => closes.push(Date.now()) },
  });
  clients.push(client);
  return { client, closes };
}

const ignore = { next: () => {}, error: () => {}, complete: () => {} };

it('a query over a WebSocket whose socket closes has its waiting calls dropped like an HTTP request', async () => {
  const fixture = await holdingGone();
  const { payment, gateway, token, requestLines } = fixture;
  const { client } = overWebSocket(gateway, token);
  client.subscribe({ query: records('GONE', 2) }, ignore);
  await until(() => payment.requests.length === 2, 5000);
  // The socket closes (no `complete` sent); the operation's line is written once it is closed.
  await client.dispose();
  await until(() => requestLines() === 1, 5000);
  await expectGoneDropped(fixture, 'WSNEXT');
});

it('a query over a WebSocket that the client completes has its waiting calls dropped, the socket still open', async () => {
  const fixture = await holdingGone();
  const { payment, gateway, token } = fixture;
  const { client, closes } = overWebSocket(gateway, token);
  const unsubscribe = client.subscribe({ query: records('GONE', 2) }, ignore);
  await until(() => payment.requests.length === 2, 5000);
  // `complete` for the query; the answer to a later operation on the same socket comes after
  // the gateway has read it.
  unsubscribe();
  const after = await new Promise((resolve, reject) =>
    client.subscribe({ query: '{ __typename }' }, { next: resolve, error: reject, complete() {} }),
  );
  expect(after).toEqual({ data: { __typename: 'Query' } });
  await expectGoneDropped(fixture, 'WSDONE');
  expect(closes).toEqual([]);
});

it('remembers an unknown reference briefly; verifyTransaction still asks', async () => {
  const { payment, gateway, token } = await setup(() => ({
    status: 404,
    body: { error: true, message: 'Transaction not found' },
  }));
  for (let i = 0; i < 50; i++) {
    const response = await gql(gateway, '{ transaction(txRef: "NT-NOPE1") { txRef } }', {}, token);
    expect(response.data).toEqual({ transaction: null });
  }
  expect(payment.requests.length).toBe(1);
  await gql(gateway, 'mutation { verifyTransaction(txRef: "NT-NOPE1") { txRef } }', {}, token);
  expect(payment.requests.length).toBe(2);
});
