/**
 * Redis going away and coming back, with a real `node src/main.ts` gateway and a real
 * redis-server stopped by its PID (SIGTERM) and started again on the same port: the gateway
 * serves throughout from the upstream, quickly; /readyz says 503 while Redis is away and 200
 * when it is back; rate limits fail open; live status still works; logs and metrics say so.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import {
  follow,
  type GatewayProcess,
  query,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import {
  type RedisBench,
  skipRedisTests,
  startRedisBench,
  type TestRedis,
} from '../helpers/redis.ts';

const skip = skipRedisTests('redis-outage');

let bench: RedisBench;
let redis: TestRedis;
let gateway: GatewayProcess;
let settleAt: Map<string, number>;
let callsFor: (txRef: string) => number;

beforeAll(async () => {
  if (skip) return;
  bench = await startRedisBench(0);
  ({ redis } = bench);
  ({ settleAt, callsFor } = bench.payment);
  gateway = await spawnGateway(bench.upstreams, {
    CACHE_URL: redis.url,
    RATE_LIMIT_RPS: '1',
    RATE_LIMIT_BURST: '2',
    SERVICE_RATE_LIMIT_RPS: '1',
    SERVICE_RATE_LIMIT_BURST: '2',
    LIVE_POLL_MS: '200',
    LIVE_HEARTBEAT_MS: '200',
  });
}, 30_000);

afterAll(async () => {
  await stopAllGateways();
  await bench?.close();
});

const readyz = async () => (await fetch(`${gateway.url}/readyz`)).status;

let serial = 0;
/** One query as a caller of its own (so the rate limit does not get in the way). */
async function timedQuery(txRef: string) {
  serial += 1;
  const token = await testToken(`caller-${serial}`);
  const started = performance.now();
  const answer = await query(gateway, `{ transaction(txRef: "${txRef}") { txRef status } }`, token);
  return { answer, ms: performance.now() - started };
}

describe.skipIf(skip)('Redis stopped and started again under a serving gateway', () => {
  it('serves throughout from the upstream, and /readyz follows (200, 503, 200)', async () => {
    const cached = `NT-OUTAGE${Date.now()}`;
    // Ready first (a busy machine may take a moment to connect): the outage starts from there.
    await until(async () => (await readyz()) === 200, 15_000);
    expect(await gateway.metric('gateway_redis_up')).toBe(1);
    await timedQuery(cached);
    await timedQuery(cached);
    expect(callsFor(cached)).toBe(1);

    // A client keeps asking the whole time, for new and known references.
    const results: { ok: boolean; ms: number }[] = [];
    let running = true;
    const background = (async () => {
      for (let i = 0; running; i += 1) {
        const { answer, ms } = await timedQuery(i % 2 ? cached : `NT-BG${Date.now()}X${i}`);
        const ok =
          answer.status === 200 &&
          (answer.body.data?.transaction as { status?: string } | undefined)?.status ===
            'SUCCESSFUL';
        results.push({ ok, ms });
        await sleep(50);
      }
    })();

    const stoppedAt = Date.now();
    await redis.stop('SIGTERM');
    const notReadyAfter = await until(async () => (await readyz()) === 503, 3000);
    expect(await gateway.metric('gateway_redis_up')).toBe(0);

    // Queries during the outage: answered from the upstream, without waiting on Redis.
    const during: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const { answer, ms } = await timedQuery(`NT-DOWN${Date.now()}X${i}`);
      expect(answer.status).toBe(200);
      expect(answer.body.data).toMatchObject({ transaction: { status: 'SUCCESSFUL' } });
      during.push(ms);
    }
    // The known reference costs an upstream call again (no cache), and still works. (At least
    // one: the background loop above reads it too, and may land in between.)
    const before = callsFor(cached);
    expect((await timedQuery(cached)).answer.status).toBe(200);
    expect(callsFor(cached)).toBeGreaterThan(before);

    // Rate limits fail open: one caller's five quick requests, over its burst of 2, all pass.
    const token = await testToken(`burst-caller-${Date.now()}`);
    const statuses = [];
    for (let i = 0; i < 5; i += 1) {
      statuses.push((await query(gateway, '{ gatewayInfo { version } }', token)).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);

    // Live status still works, polled by this process alone.
    const live = `NT-OUTLIVE${Date.now()}`;
    settleAt.set(live, Date.now() + 1200);
    const followed = follow(gateway, live, await testToken());
    await Promise.race([followed.done, sleep(8000)]);
    expect(followed.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
    expect(followed.completed).toBe(true);

    expect(await readyz()).toBe(503);
    await redis.start();
    const readyAfter = await until(async () => (await readyz()) === 200, 5000);
    expect(await gateway.metric('gateway_redis_up')).toBe(1);
    running = false;
    await background;

    // The cache is used again: a new record lands in Redis and is served from it.
    const fresh = `NT-BACK${Date.now()}`;
    await timedQuery(fresh);
    expect(await redis.command(['EXISTS', `gw:cache:tx:v4:${fresh}`])).toBe(1);
    await timedQuery(fresh);
    expect(callsFor(fresh)).toBe(1);
    // And the shared rate limit is back: 2 allowed, then refused.
    const limited = await testToken(`limited-again-${Date.now()}`);
    const after = [];
    for (let i = 0; i < 3; i += 1) {
      after.push((await query(gateway, '{ gatewayInfo { version } }', limited)).status);
    }
    expect(after).toEqual([200, 200, 429]);

    const slowest = Math.max(...during, ...results.map((r) => r.ms));
    console.info(
      `[redis-outage] 503 ${notReadyAfter} ms after the stop, 200 ${readyAfter} ms after the start; ` +
        `${results.length} background queries over ${Date.now() - stoppedAt} ms, all answered: ` +
        `${results.every((r) => r.ok)}; slowest query ${Math.round(slowest)} ms`,
    );
    expect(results.length).toBeGreaterThan(5);
    expect(results.every((r) => r.ok)).toBe(true);
    // Bounded: no request waited for Redis longer than a command timeout or so.
    expect(slowest).toBeLessThan(1000);

    // Metrics and logs said so, without the URL.
    expect(
      await gateway.metric('gateway_redis_errors_total', { component: 'rate_limit' }),
    ).toBeGreaterThan(0);
    expect(
      await gateway.metric('gateway_cache_events_total', { outcome: 'error' }),
    ).toBeGreaterThan(0);
    expect(gateway.output()).toContain('redis unreachable');
    expect(gateway.output()).not.toContain(redis.url);
    expect(gateway.output()).not.toContain(String(redis.port));
  });

  it('does not wait on a Redis that hangs (SIGSTOP) longer than about one command timeout', async () => {
    await until(async () => (await readyz()) === 200, 15_000);
    redis.signal('SIGSTOP');
    try {
      const times: number[] = [];
      const started = Date.now();
      // Two seconds of traffic: the first command to time out makes Redis count as down for
      // a second, so at most about one request per second waits the 250 ms.
      while (Date.now() - started < 2000) {
        const { answer, ms } = await timedQuery(`NT-HUNG${Date.now()}`);
        expect(answer.status).toBe(200);
        expect(answer.body.data).toMatchObject({ transaction: { status: 'SUCCESSFUL' } });
        times.push(ms);
      }
      expect(await readyz()).toBe(503);
      const slow = times.filter((ms) => ms > 200).length;
      const median = [...times].sort((x, y) => x - y)[Math.floor(times.length / 2)] ?? 0;
      console.info(
        `[redis-outage] hung Redis: ${times.length} queries in 2 s, ${slow} waited over 200 ms, median ${Math.round(median)} ms, slowest ${Math.round(Math.max(...times))} ms`,
      );
      // Were each request to wait for the timeout, there would be at most 8, all slow: a count,
      // not a time, says that Redis counted as down after the first timeout of each second.
      expect(times.length).toBeGreaterThan(10);
      expect(slow).toBeLessThanOrEqual(4);
      expect(Math.max(...times)).toBeLessThan(1000);
    } finally {
      redis.signal('SIGCONT');
    }
    await until(async () => (await readyz()) === 200, 5000);
  });
});
