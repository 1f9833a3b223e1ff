/**
 * The single flight between replicas over a real redis-server, at the record sources: two
 * replicas (each its own Redis connection, record store and sources) read one record from a real
 * HTTP upstream that holds its answer. A replica waiting for the other's read stops waiting once
 * every request waiting for it has ended: it never calls the upstream and stores nothing, even
 * when the lease is then given back without a value.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordSources } from '../../src/cache/sources.ts';
import { redisState } from '../../src/state/index.ts';
import { RedisConnection } from '../../src/state/redis.ts';
import { stopEnd } from '../../src/transports/io.ts';
import { type Fixture, startFixture, transactionBody } from '../helpers/fixture.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';
import { testSources } from '../helpers/sources.ts';

const skip = skipRedisTests('redis-single-flight');

let redis: TestRedis | undefined;
let payment: Fixture | undefined;
const connections: RedisConnection[] = [];

/** The service holds the first call's answer until `release`, then answers it 500. */
let release = () => {};
let held = Promise.resolve();
let arrived = () => {};

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  payment = await startFixture((request, index) => {
    arrived();
    if (index === 0) return { status: 500, body: { error: true }, until: held };
    return { body: transactionBody({ paymentRef: request.path.split('/').pop() }) };
  });
});

afterAll(async () => {
  for (const connection of connections) await connection.close();
  await redis?.stop();
  await payment?.close();
});

/** One replica: its own connection to the Redis, its record store and its sources. */
async function replica(pause?: (ms: number) => Promise<unknown>): Promise<RecordSources> {
  if (!redis || !payment) throw new Error('no redis');
  const connection = new RedisConnection(
    { url: redis.url, connectTimeoutMs: 1000, commandTimeoutMs: 1000, keyPrefix: 'flight-test' },
    { state: () => {}, error: () => {} },
  );
  connections.push(connection);
  expect(await connection.connected(5000)).toBe(true);
  const state = redisState(connection);
  return testSources({
    baseUrl: payment.url,
    state,
    // Held answers must not time out on a busy machine.
    upstream: { timeoutMs: 30_000 },
    flight: { holdMs: 31_000, waitMs: 30_000, pollMs: 5, ...(pause && { pause }) },
  });
}

describe.skipIf(skip)('single flight between replicas over Redis', () => {
  it("a replica waiting for the other's read stops once no request waits for it: no call, nothing stored", async () => {
    if (!payment) throw new Error('no upstream');
    const TX = 'NT-LEASE1';
    held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    // Each look of the waiting replica at the cache is told to the test.
    let looked = () => {};
    const look = () =>
      new Promise<void>((resolve) => {
        looked = resolve;
      });
    const a = await replica();
    const b = await replica(async (ms) => {
      looked();
      await sleep(ms);
    });

    // Replica A takes the lease; its call is held by the service (a read no request can end).
    const readA = a.transaction(TX);
    await first;
    // Two requests on replica B wait for A's read (B's own single flight in front).
    const y = new AbortController();
    const z = new AbortController();
    let looking = look();
    const readsB = [b.transaction(TX, { end: stopEnd(y) }), b.transaction(TX, { end: stopEnd(z) })];
    const settledB = Promise.allSettled(readsB);
    await looking;
    // One of them ends: B still waits for the other.
    y.abort();
    looking = look();
    await looking;
    looking = look();
    await looking;
    // The other ends too; then A's call fails and A gives the lease back without a value, which
    // a replica still waiting would take, to call the upstream itself.
    z.abort();
    release();
    await expect(readA).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    for (const outcome of await settledB) {
      expect(outcome.status === 'rejected' && outcome.reason).toBeInstanceOf(DOMException);
    }
    expect(payment.requests).toHaveLength(1);
    // Nothing was stored for the record: the next read calls the upstream.
    expect((await b.transaction(TX))?.txRef).toBe(TX);
    expect(payment.requests).toHaveLength(2);
  });
});
