/**
 * graphql-sse's single-connection mode behind a round-robin balancer: two `node src/main.ts`
 * replicas sharing one real redis-server (with the cache key, so that what they relay is sealed).
 * A reservation made on one replica is streamed from the other and operated from either; another
 * caller cannot use it; a client that does not read still loses it at STREAM_MAX_BUFFERED_BYTES;
 * when the replica holding the stream dies, the client sees its stream break and the token answers
 * 404 everywhere.
 */
import { createHash } from 'node:crypto';
import { createClient as createRedisClient } from '@redis/client';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Balancer, startBalancer } from '../helpers/balancer.ts';
import { until } from '../helpers/eventually.ts';
import {
  type GatewayProcess,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { type RedisBench, skipRedisTests, startRedisBench } from '../helpers/redis.ts';
import { stalledAnswer } from '../helpers/transports.ts';

const skip = skipRedisTests('sse-replicas');
const TOKEN_HEADER = 'x-graphql-event-stream-token';
const STATUS = 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { txRef status } }';
const QUERY = '{ gatewayInfo { sandbox } }';
// A large answer: the schema's types and their fields.
const BIG = '{ __schema { types { name description fields { name description type { name } } } } }';
const MAX_BUFFERED = 262_144;

let bench: RedisBench;
let a: GatewayProcess;
let b: GatewayProcess;
let balancer: Balancer;
let token: string;
let other: string;

beforeAll(async () => {
  if (skip) return;
  // Every payment stays PENDING: subscriptions stay open until the test ends them.
  bench = await startRedisBench(Number.POSITIVE_INFINITY);
  const env = {
    CACHE_URL: bench.redis.url,
    CACHE_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    LIVE_POLL_MS: '500',
    INTROSPECTION: 'true',
    STREAM_MAX_BUFFERED_BYTES: String(MAX_BUFFERED),
    STREAM_WRITE_TIMEOUT_MS: '2000',
  };
  [a, b] = await Promise.all([
    spawnGateway(bench.upstreams, env),
    spawnGateway(bench.upstreams, env),
  ]);
  balancer = await startBalancer([a.url, b.url], 500);
  await until(() => balancer.inRotation(a.url) && balancer.inRotation(b.url), 10_000);
  token = await testToken();
  other = await testToken('another-merchant');
}, 30_000);

afterAll(async () => {
  await balancer?.close();
  await stopAllGateways();
  await bench?.close();
});

/** Reserves a stream on `gateway`; resolves to its token. */
async function reserve(gateway: { url: string }, bearer = token): Promise<string> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${bearer}` },
  });
  expect(response.status).toBe(201);
  return response.text();
}

/** How keys and channels name a token: a digest of it (SHA-256, base64url, 22 characters). */
function digestOf(streamToken: string): string {
  return createHash('sha256').update(streamToken).digest('base64url').slice(0, 22);
}

/** An event stream being read as it arrives. */
interface OpenStream {
  status: number;
  text: () => string;
  /** Resolves once the text read so far matches. */
  waitFor: (pattern: RegExp, ms?: number) => Promise<string>;
  /** Resolves when the stream ended, with how (`done` or the error's message). */
  ended: Promise<string>;
  close: () => void;
}

async function openStream(
  gateway: { url: string },
  streamToken: string,
  bearer = token,
): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${gateway.url}/graphql`, {
    headers: {
      accept: 'text/event-stream',
      authorization: `Bearer ${bearer}`,
      [TOKEN_HEADER]: streamToken,
    },
    signal: controller.signal,
  });
  let text = '';
  const ended =
    response.status === 200 && response.body
      ? (async () => {
          const decoder = new TextDecoder();
          try {
            const reader = (response.body as ReadableStream<Uint8Array>).getReader();
            for (;;) {
              const { value, done } = await reader.read();
              if (done) return 'done';
              text += decoder.decode(value, { stream: true });
            }
          } catch (error) {
            return (error as Error).message;
          }
        })()
      : response.text().then((body) => {
          text = body;
          return 'done';
        });
  return {
    status: response.status,
    text: () => text,
    waitFor: async (pattern, ms = 15_000) => {
      await until(() => pattern.test(text), ms);
      return text;
    },
    ended,
    close: () => controller.abort(),
  };
}

/** POSTs one operation of a reservation to `gateway`. */
async function post(
  gateway: { url: string },
  streamToken: string,
  operationId: string,
  body: Record<string, unknown>,
  bearer = token,
): Promise<{ status: number; body: string }> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${bearer}`,
      [TOKEN_HEADER]: streamToken,
    },
    body: JSON.stringify({ ...body, extensions: { operationId } }),
  });
  return { status: response.status, body: await response.text() };
}

describe.skipIf(skip)('graphql-sse single connection across replicas', () => {
  it("with graphql-sse's own client through the balancer: a subscription and a query both stream", async () => {
    const client = createClient({
      url: `${balancer.url}/graphql`,
      singleConnection: true,
      retryAttempts: 0,
      headers: { authorization: `Bearer ${token}` },
    });
    const served = { a: await a.metric('gateway_graphql_requests_total') };
    try {
      const txRef = `NT-PENDING${Date.now()}LB`;
      const subscription = client.iterate({ query: STATUS, variables: { txRef } });
      const first = await subscription.next();
      expect(first.value).toEqual({
        data: { transactionStatus: { txRef, status: 'PENDING' } },
      });
      // Several queries, so that round-robin sends them to both replicas.
      for (let i = 0; i < 4; i += 1) {
        const results = [];
        for await (const result of client.iterate({ query: QUERY })) results.push(result);
        expect(results).toEqual([{ data: { gatewayInfo: { sandbox: false } } }]);
      }
      await subscription.return?.();
    } finally {
      client.dispose();
    }
    // The balancer handed this client's requests (PUT, stream, POSTs) to both replicas.
    expect(balancer.served.get(new URL(a.url).origin) ?? 0).toBeGreaterThan(0);
    expect(balancer.served.get(new URL(b.url).origin) ?? 0).toBeGreaterThan(0);
    expect(await a.metric('gateway_graphql_requests_total')).toBeGreaterThan(served.a);
  }, 60_000);

  it('a PUT on A, the stream on B, operations and a stop POSTed on A and on B', async () => {
    const streamToken = await reserve(a);
    const stream = await openStream(b, streamToken);
    expect(stream.status).toBe(200);
    const txRef = `NT-PENDING${Date.now()}AB`;
    try {
      // On A, which does not hold the stream: relayed to B, answered as B answers.
      expect(
        (await post(a, streamToken, 'sub', { query: STATUS, variables: { txRef } })).status,
      ).toBe(202);
      expect((await post(b, streamToken, 'q1', { query: QUERY })).status).toBe(202);
      expect((await post(a, streamToken, 'q2', { query: QUERY })).status).toBe(202);
      const text = await stream.waitFor(/"id":"q2"[\s\S]*event: complete\ndata: \{"id":"q2"\}/);
      await stream.waitFor(/"id":"sub"/);
      expect(text).toContain(
        `event: next\ndata: ${JSON.stringify({ id: 'q1', payload: { data: { gatewayInfo: { sandbox: false } } } })}`,
      );
      expect(stream.text()).toContain(
        `event: next\ndata: ${JSON.stringify({ id: 'sub', payload: { data: { transactionStatus: { txRef, status: 'PENDING' } } } })}`,
      );
      // The holder's checks answer through the relay: the same id again is refused (409) while
      // it runs, and a document that does not validate is refused with its code.
      const again = await post(a, streamToken, 'sub', { query: STATUS, variables: { txRef } });
      expect(again.status).toBe(409);
      const invalid = await post(a, streamToken, 'bad', { query: '{ nope }' });
      expect(invalid.status).toBe(400);
      expect(JSON.parse(invalid.body).errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      // A stop sent to A reaches B: the id is free again.
      const stopped = await fetch(`${a.url}/graphql?operationId=sub`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}`, [TOKEN_HEADER]: streamToken },
      });
      expect(stopped.status).toBe(200);
      expect((await post(a, streamToken, 'sub', { query: QUERY })).status).toBe(202);
      await stream.waitFor(/event: complete\ndata: \{"id":"sub"\}/);
      // The stream cannot be opened twice, on either replica.
      for (const gateway of [a, b]) {
        const second = await openStream(gateway, streamToken);
        expect(second.status).toBe(409);
      }
    } finally {
      stream.close();
    }
    // Once its stream is closed, the reservation is gone on both replicas.
    await until(
      async () => (await post(a, streamToken, 'late', { query: QUERY })).status === 404,
      10_000,
    );
    expect((await post(b, streamToken, 'late', { query: QUERY })).status).toBe(404);
  }, 60_000);

  it('what Redis holds: the caller sealed under a digest of the token, a holder lease, nothing once the stream ends', async () => {
    const streamToken = await reserve(a);
    const digest = digestOf(streamToken);
    const reservation = `gw:{sse:${digest}}:reservation`;
    const holder = `gw:{sse:${digest}}:holder`;
    const keys = (await bench.redis.command(['KEYS', 'gw:*'])) as string[];
    expect(keys).toContain(reservation);
    expect(keys.join(' ')).not.toContain(streamToken);
    const sealed = String(await bench.redis.command(['GET', reservation]));
    expect(sealed).toMatch(/^gwe1:/);
    expect(sealed).not.toContain('test-merchant');
    // Unused, it expires with the reservation's 30 s.
    expect(Number(await bench.redis.command(['PTTL', reservation]))).toBeLessThanOrEqual(30_000);
    expect(Number(await bench.redis.command(['PTTL', reservation]))).toBeGreaterThan(0);
    expect(await bench.redis.command(['EXISTS', holder])).toBe(0);
    const stream = await openStream(b, streamToken);
    expect(stream.status).toBe(200);
    // Held by B under a lease that B renews while the stream is open.
    expect(String(await bench.redis.command(['GET', holder]))).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(await bench.redis.command(['PTTL', holder]))).toBeLessThanOrEqual(30_000);
    expect(Number(await bench.redis.command(['PTTL', holder]))).toBeGreaterThan(0);
    stream.close();
    await until(
      async () => (await bench.redis.command(['EXISTS', reservation, holder])) === 0,
      10_000,
    );
  }, 60_000);

  it("another caller's token cannot use the reservation, on either replica", async () => {
    const streamToken = await reserve(a);
    // Not its stream to open, here or there.
    for (const gateway of [a, b]) {
      const foreign = await openStream(gateway, streamToken, other);
      expect(foreign.status).toBe(404);
    }
    const stream = await openStream(b, streamToken);
    expect(stream.status).toBe(200);
    try {
      for (const gateway of [a, b]) {
        const refused = await post(
          gateway,
          streamToken,
          `x-${gateway.url}`,
          { query: QUERY },
          other,
        );
        expect(refused.status).toBe(404);
        const stop = await fetch(`${gateway.url}/graphql?operationId=any`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${other}`, [TOKEN_HEADER]: streamToken },
        });
        expect(stop.status).toBe(404);
      }
      // The owner's own operation still goes through, and nothing of the other's was delivered.
      expect((await post(a, streamToken, 'mine', { query: QUERY })).status).toBe(202);
      await stream.waitFor(/event: complete\ndata: \{"id":"mine"\}/);
      expect(stream.text()).not.toContain('"id":"x-');
    } finally {
      stream.close();
    }
  }, 60_000);

  it('a stream on B that is never read is ended at STREAM_MAX_BUFFERED_BYTES, whoever POSTs', async () => {
    const endedBefore = await b.metric('gateway_streams_ended_total', { transport: 'sse' });
    const streamToken = await reserve(a);
    const { socket, head } = await stalledAnswer(b.url, 'GET', '/graphql', {
      authorization: `Bearer ${token}`,
      accept: 'text/event-stream',
      [TOKEN_HEADER]: streamToken,
    });
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    const statuses: number[] = [];
    try {
      for (let i = 0; i < 400 && !statuses.includes(404); i += 4) {
        const answers = await Promise.all(
          [0, 1, 2, 3].map((j) => post(a, streamToken, `big${i + j}`, { query: BIG })),
        );
        statuses.push(...answers.map((answer) => answer.status));
      }
    } finally {
      socket.destroy();
    }
    expect(statuses.filter((status) => status !== 202 && status !== 404)).toEqual([]);
    // Dropped by its holder, counted there; the token is unknown from then on.
    expect(statuses).toContain(404);
    expect(await b.metric('gateway_streams_ended_total', { transport: 'sse' })).toBeGreaterThan(
      endedBefore,
    );
    // A byte bound, not a count: it took more than a handful of operations.
    expect(statuses.filter((status) => status === 202).length).toBeGreaterThan(4);
    expect((await post(b, streamToken, 'after', { query: QUERY })).status).toBe(404);
  }, 120_000);

  it('a message published on Redis by a party without the key is dropped; a captured one replayed is not served again', async () => {
    const streamToken = await reserve(a);
    const stream = await openStream(b, streamToken);
    expect(stream.status).toBe(200);
    const channel = `gw:{sse:${digestOf(streamToken)}}:stream`;
    const captured: string[] = [];
    const listener = createRedisClient({ url: bench.redis.url });
    listener.on('error', () => {});
    await listener.connect();
    try {
      await listener.subscribe(channel, (message) => void captured.push(message));
      const rejectedBefore = await b.metric('gateway_live_messages_rejected_total');
      // In clear, as an operation relayed by a replica would look without the seal.
      await bench.redis.command([
        'PUBLISH',
        channel,
        JSON.stringify({
          kind: 'operate',
          authorization: `Bearer ${token}`,
          params: { query: QUERY, extensions: { operationId: 'forged' } },
          requestId: 'forged',
          reply: 'x',
          id: 'forged',
          at: Date.now(),
        }),
      ]);
      await until(
        async () => (await b.metric('gateway_live_messages_rejected_total')) > rejectedBefore,
        10_000,
      );
      // A real relayed operation, captured on its way, then published again.
      captured.length = 0;
      expect((await post(a, streamToken, 'once', { query: QUERY })).status).toBe(202);
      await stream.waitFor(/event: complete\ndata: \{"id":"once"\}/);
      await until(() => captured.length === 1, 10_000);
      await bench.redis.command(['PUBLISH', channel, captured[0] ?? '']);
      // Published after the replay, on the same channel: served after it.
      expect((await post(a, streamToken, 'after', { query: QUERY })).status).toBe(202);
      const text = await stream.waitFor(/event: complete\ndata: \{"id":"after"\}/);
      expect(text.match(/event: next\ndata: \{"id":"once"/g)).toHaveLength(1);
      expect(text).not.toContain('"id":"forged"');
    } finally {
      await listener.quit().catch(() => undefined);
      stream.close();
    }
  }, 60_000);

  // Last: B is killed.
  it('when the replica holding the stream dies, the client sees its stream break and the token answers 404', async () => {
    const streamToken = await reserve(a);
    const stream = await openStream(b, streamToken);
    expect(stream.status).toBe(200);
    expect((await post(a, streamToken, 'q', { query: QUERY })).status).toBe(202);
    await stream.waitFor(/event: complete\ndata: \{"id":"q"\}/);
    await b.stop('SIGKILL');
    // Broken off (the chunked answer never ended), not ended cleanly.
    expect(await stream.ended).not.toBe('done');
    // No replica listens for the stream any more: A answers 404 at once, not after a lease.
    const late = await post(a, streamToken, 'late', { query: QUERY });
    expect(late.status).toBe(404);
    expect(JSON.parse(late.body).errors[0].message).toBe(
      'No stream is reserved under this token for this caller.',
    );
  }, 60_000);
});
