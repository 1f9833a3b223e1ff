/**
 * Redis faults under load, with two real gateway processes (`node src/main.ts`) on one real
 * redis-server: stopped, started again, slowed (`DEBUG SLEEP`), and its pub/sub connections cut
 * (`CLIENT KILL TYPE pubsub`), while clients keep querying both replicas and live subscribers
 * follow a payment on each. Asserted by counts, not by wall-clock ceilings: no wrong record is
 * served (every answer is the record asked for, never a status it did not have, never a pending
 * one long after it settled), no request fails, no process crashes, /readyz goes 503 then 200,
 * subscribers fall back to one poller per replica while Redis is away and to one for the
 * cluster when it is back, and they all see the payment settle.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import {
  type Followed,
  follow,
  type GatewayProcess,
  query,
  spawnReplicas,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { type RedisBench, skipRedisTests, startRedisBench } from '../helpers/redis.ts';

const skip = skipRedisTests('redis-faults');
/** Pending records are cached 1 s: a PENDING answer later than this after settling is wrong. */
const PENDING_GRACE_MS = 2500;

let bench: RedisBench;
let a: GatewayProcess;
let b: GatewayProcess;

beforeAll(async () => {
  if (skip) return;
  bench = await startRedisBench(0, ['--enable-debug-command', 'local']);
  const env = {
    CACHE_URL: bench.redis.url,
    CACHE_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    CACHE_TTL_PENDING_SECONDS: '1',
    LIVE_POLL_MS: '200',
    LIVE_HEARTBEAT_MS: '200',
    LIVE_MAX_PER_CALLER: '100',
  };
  [a, b] = await spawnReplicas(bench.upstreams, env);
}, 30_000);

afterAll(async () => {
  await stopAllGateways();
  await bench?.close();
});

interface Tally {
  answered: number;
  failed: string[];
  wrong: string[];
}

const readyz = async (gateway: GatewayProcess) => {
  try {
    return (await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(5000) })).status;
  } catch {
    return 0;
  }
};
const bothReady = async (status: number) =>
  (await readyz(a)) === status && (await readyz(b)) === status;
const pollers = async () =>
  (await a.metric('gateway_live_pollers')) + (await b.metric('gateway_live_pollers'));

describe.skipIf(skip)('Redis faults under load, two processes', () => {
  it('stop, start, DEBUG SLEEP and CLIENT KILL TYPE pubsub: right records, no failure, recovery', async () => {
    const started = Date.now();
    const { settleAt } = bench.payment;
    // Ten references that settle during the faults, ten settled from the start.
    const late = Array.from({ length: 10 }, (_, i) => `NT-FLATE${started}X${i}`);
    for (const txRef of late) settleAt.set(txRef, started + 4000);
    const settled = Array.from({ length: 10 }, (_, i) => `NT-FDONE${started}X${i}`);
    const live = `NT-FLIVE${started}`;
    settleAt.set(live, Number.POSITIVE_INFINITY);

    const token = await testToken('fault-load');
    const followers: Followed[] = [a, a, b, b].map((gateway) => follow(gateway, live, token));
    await Promise.all(followers.map((f) => f.first));
    await until(async () => (await pollers()) === 1, 5000);

    // The load: four clients, both replicas, queries and verifications, every answer checked.
    const tally: Tally = { answered: 0, failed: [], wrong: [] };
    let running = true;
    const worker = async (n: number) => {
      for (let i = 0; running; i += 1) {
        const gateway = (n + i) % 2 ? a : b;
        const txRef = (i % 2 ? late : settled)[(n * 7 + i) % 10] ?? '';
        const verify = i % 5 === 0;
        const text = verify
          ? `mutation { verifyTransaction(txRef: "${txRef}") { txRef status amount } }`
          : `{ transaction(txRef: "${txRef}") { txRef status amount } }`;
        const begun = Date.now();
        try {
          const { status, body } = await query(gateway, text, token);
          const ended = Date.now();
          const record = (body.data?.[verify ? 'verifyTransaction' : 'transaction'] ?? null) as {
            txRef?: string;
            status?: string;
            amount?: number;
          } | null;
          if (status !== 200 || body.errors || !record) {
            tally.failed.push(`${status} ${JSON.stringify(body.errors ?? body.data)}`);
            continue;
          }
          tally.answered += 1;
          const settles = settleAt.get(txRef) ?? 0;
          if (record.txRef !== txRef) tally.wrong.push(`${txRef} answered as ${record.txRef}`);
          if (record.amount !== 1000.5) tally.wrong.push(`${txRef} amount ${record.amount}`);
          if (record.status === 'SUCCESSFUL' && ended < settles) {
            tally.wrong.push(`${txRef} SUCCESSFUL before it settled`);
          }
          if (record.status === 'PENDING' && begun > settles + PENDING_GRACE_MS) {
            tally.wrong.push(`${txRef} PENDING ${begun - settles} ms after it settled`);
          }
        } catch (error) {
          tally.failed.push(String(error));
        }
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    const answeredBy = async (more: number) => {
      const target = tally.answered + more;
      await until(() => tally.answered >= target, 15_000).catch((error: unknown) => {
        throw new Error(
          `${String(error)}: ${tally.failed.length} failed, e.g. ${tally.failed[0]}; wrong: ${tally.wrong[0]}`,
        );
      });
    };
    await answeredBy(20);

    // 1. Redis stopped: both replicas unready, each polls for its own subscribers.
    await bench.redis.stop();
    await until(() => bothReady(503), 5000);
    await until(async () => (await pollers()) === 2, 5000);
    const beforeDown = tally.answered;
    await answeredBy(40);
    const duringDown = tally.answered - beforeDown;

    // 2. Started again: both ready, one poller for the cluster again.
    await bench.redis.start();
    await until(() => bothReady(200), 10_000);
    await until(async () => (await pollers()) === 1, 10_000);
    await answeredBy(20);

    // 3. Slowed: Redis answers nothing for 1.5 s (DEBUG SLEEP blocks the whole server).
    const beforeSleep = tally.answered;
    const sleeping = bench.redis.command(['DEBUG', 'SLEEP', '1.5']);
    await sleep(100);
    await answeredBy(10);
    await sleeping;
    const duringSleep = tally.answered - beforeSleep;
    await until(() => bothReady(200), 10_000);

    // 4. Pub/sub connections cut: node-redis reconnects and subscribes again.
    const killed = Number(await bench.redis.command(['CLIENT', 'KILL', 'TYPE', 'pubsub']));
    await answeredBy(10);
    // Past the late references' settle time, with the load still running.
    await until(() => Date.now() > started + 4000 + PENDING_GRACE_MS + 1000, 15_000);
    await answeredBy(20);
    settleAt.set(live, Date.now());
    await Promise.race([Promise.all(followers.map((f) => f.done)), sleep(10_000)]);

    running = false;
    await Promise.all(workers);
    console.info(
      `[redis-faults] ${tally.answered} answers (${duringDown} while Redis was stopped, ${duringSleep} during DEBUG SLEEP 1.5), ${tally.failed.length} failed, ${tally.wrong.length} wrong; pub/sub connections killed: ${killed}; followers: ${followers.map((f) => f.statuses.join('>')).join(', ')}`,
    );
    expect(tally.wrong).toEqual([]);
    expect(tally.failed).toEqual([]);
    expect(duringDown).toBeGreaterThanOrEqual(40);
    expect(duringSleep).toBeGreaterThanOrEqual(10);
    expect(killed).toBeGreaterThanOrEqual(2);
    for (const f of followers) {
      expect(f.errors).toEqual([]);
      expect(f.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
      expect(f.completed).toBe(true);
    }
    // The late references settled for everyone, and no process crashed.
    for (const gateway of [a, b]) {
      for (const txRef of late) {
        const { body } = await query(
          gateway,
          `{ transaction(txRef: "${txRef}") { status } }`,
          token,
        );
        expect(body.data).toEqual({ transaction: { status: 'SUCCESSFUL' } });
      }
      expect(gateway.child.exitCode).toBeNull();
      expect(gateway.output()).not.toMatch(/uncaught|unhandled|FATAL/i);
    }
    await until(async () => (await pollers()) === 0, 5000);
    expect(await bothReady(200)).toBe(true);
  }, 90_000);
});
