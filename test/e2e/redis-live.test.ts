/**
 * Live status across processes: two `node src/main.ts` gateways share one real
 * redis-server and one fixture payment upstream whose PENDING references turn SUCCESSFUL at a
 * time the test sets. Subscribers use the graphql-sse client (distinct connections mode). One
 * poll sequence serves every subscriber of the cluster; a killed poller is replaced; polling
 * stops when the cluster's last subscriber leaves.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import {
  type Followed,
  follow,
  type GatewayProcess,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { type RedisBench, skipRedisTests, startRedisBench } from '../helpers/redis.ts';

const skip = skipRedisTests('redis-live');
const POLL_MS = 200;

let bench: RedisBench;
let a: GatewayProcess;
let b: GatewayProcess;
let token: string;
let settleAt: Map<string, number>;
let callsFor: (txRef: string) => number;

beforeAll(async () => {
  if (skip) return;
  bench = await startRedisBench(Number.POSITIVE_INFINITY);
  ({ settleAt, callsFor } = bench.payment);
  const env = {
    CACHE_URL: bench.redis.url,
    // One poller for the cluster is counted exactly: a Redis command a busy machine delays
    // past the default 250 ms would count as Redis down, and the other process would poll too.
    CACHE_COMMAND_TIMEOUT_MS: '5000',
    LIVE_POLL_MS: String(POLL_MS),
    LIVE_HEARTBEAT_MS: '250',
    // One token follows with 50 streams here: more than a caller may hold by default.
    LIVE_MAX_PER_CALLER: '100',
  };
  [a, b] = await Promise.all([
    spawnGateway(bench.upstreams, env),
    spawnGateway(bench.upstreams, env),
  ]);
  token = await testToken();
}, 30_000);

afterAll(async () => {
  await stopAllGateways();
  await bench?.close();
});

describe.skipIf(skip)('transactionStatus over SSE, two processes, one Redis', () => {
  it('50 subscribers over two processes cause one poll sequence, and all see PENDING, SUCCESSFUL, complete', async () => {
    const txRef = `NT-LIVE${Date.now()}`;
    const started = Date.now();
    settleAt.set(txRef, started + 3000);
    const followers = Array.from({ length: 50 }, (_, i) => follow(i % 2 ? b : a, txRef, token));
    await Promise.all(followers.map((f) => f.first));
    await Promise.race([Promise.all(followers.map((f) => f.done)), sleep(10_000)]);
    const watched = Date.now() - started;

    for (const f of followers) {
      expect(f.errors).toEqual([]);
      expect(f.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
      expect(f.completed).toBe(true);
    }
    // One sequence: about the watch time over the poll interval (plus the first read), where
    // a poller per process would make twice that and a poller per subscriber fifty times.
    const calls = callsFor(txRef);
    const oneSequence = Math.ceil(3000 / POLL_MS);
    console.info(
      `[redis-live] 50 subscribers over 2 processes: ${calls} upstream calls in ${watched} ms (one sequence: about ${oneSequence} + the first read)`,
    );
    expect(calls).toBeGreaterThanOrEqual(oneSequence / 2);
    expect(calls).toBeLessThanOrEqual(oneSequence + 6);
    // And one process polled, the other only listened.
    const polls = [
      await a.metric('gateway_live_polls_total'),
      await b.metric('gateway_live_polls_total'),
    ];
    expect(polls.filter((count) => count > 0)).toHaveLength(1);
    await until(
      async () =>
        (await a.metric('gateway_live_pollers')) + (await b.metric('gateway_live_pollers')) === 0,
      2000,
    );
    await until(
      async () =>
        (await a.metric('gateway_live_subscribers')) +
          (await b.metric('gateway_live_subscribers')) ===
        0,
      2000,
    );
  });

  it('stops polling when the last subscriber of the cluster leaves, not before', async () => {
    const txRef = `NT-LEAVE${Date.now()}`;
    const onA = [follow(a, txRef, token), follow(a, txRef, token)];
    const onB = [follow(b, txRef, token), follow(b, txRef, token)];
    await Promise.all([...onA, ...onB].map((f) => f.first));
    await until(
      async () =>
        (await a.metric('gateway_live_pollers')) + (await b.metric('gateway_live_pollers')) === 1,
      2000,
    );
    const pollerIsA = (await a.metric('gateway_live_pollers')) === 1;
    const here: Followed[] = pollerIsA ? onA : onB;
    const there: Followed[] = pollerIsA ? onB : onA;

    // The poller's own subscribers leave: it keeps polling for the other process's.
    for (const f of here) f.stop();
    const before = callsFor(txRef);
    await until(() => callsFor(txRef) >= before + 2, 4000);
    expect(there.every((f) => f.statuses.join() === 'PENDING' && !f.completed)).toBe(true);

    // The last ones leave: polling stops within a heartbeat and a poll.
    for (const f of there) f.stop();
    await until(
      async () =>
        (await a.metric('gateway_live_pollers')) + (await b.metric('gateway_live_pollers')) === 0,
      4000,
    );
    // No poller left anywhere: once a poll that was in flight has landed, the count stands.
    await sleep(100);
    const after = callsFor(txRef);
    await sleep(100);
    expect(callsFor(txRef)).toBe(after);
  });

  it('hands polling to the other process when the polling one is killed (SIGKILL)', async () => {
    const txRef = `NT-KILL${Date.now()}`;
    const started = Date.now();
    settleAt.set(txRef, started + 4000);
    const onA = Array.from({ length: 5 }, () => follow(a, txRef, token));
    const onB = Array.from({ length: 5 }, () => follow(b, txRef, token));
    await Promise.all([...onA, ...onB].map((f) => f.first));
    await until(
      async () =>
        (await a.metric('gateway_live_pollers')) + (await b.metric('gateway_live_pollers')) === 1,
      2000,
    );
    // The poller has polled at least once (its lock and heartbeat are in Redis).
    await until(
      async () =>
        (await a.metric('gateway_live_polls_total')) +
          (await b.metric('gateway_live_polls_total')) >=
        1,
      2000,
    );
    const pollerIsA = (await a.metric('gateway_live_pollers')) === 1;
    const [victim, survivor] = pollerIsA ? [a, b] : [b, a];
    const [lost, kept] = pollerIsA ? [onA, onB] : [onB, onA];
    const pollsBefore = await survivor.metric('gateway_live_polls_total');
    expect(await victim.stop('SIGKILL')).toBeNull();
    const killedAt = Date.now();

    await Promise.race([Promise.all(kept.map((f) => f.done)), sleep(10_000)]);
    for (const f of kept) {
      expect(f.errors).toEqual([]);
      expect(f.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
      expect(f.completed).toBe(true);
    }
    for (const f of lost) f.stop();
    // The survivor polled from the takeover on: one sequence still, with a gap of a few beats.
    expect(await survivor.metric('gateway_live_polls_total')).toBeGreaterThan(pollsBefore);
    const calls = callsFor(txRef);
    console.info(
      `[redis-live] SIGKILL of the poller ${killedAt - started} ms in: ${calls} upstream calls in all; survivors done ${Date.now() - killedAt} ms after the kill`,
    );
    expect(calls).toBeLessThanOrEqual(Math.ceil(4000 / POLL_MS) + 6);
  });
});
