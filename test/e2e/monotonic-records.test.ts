/**
 * Records never go back in time: a read that began before a fresher record was stored (by
 * `verifyTransaction`, or a live poll) does not overwrite it; but a fresh read always wins, whatever
 * the status stored (a SUCCESSFUL payment since reversed is stored as the service says) — with two
 * real gateway processes on one real redis-server (the compare-and-set is a Lua script), and in one
 * process's memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import {
  type Fixture,
  type FixtureAnswer,
  startFixture,
  transactionBody,
} from '../helpers/fixture.ts';
import { setup } from '../helpers/fixture-gateway.ts';
import {
  type GatewayProcess,
  query,
  spawnReplicas,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { type RedisBench, skipRedisTests, startRedisBench } from '../helpers/redis.ts';

const skip = skipRedisTests('monotonic-records');

/**
 * Per reference, the answers in order: the first call answers the first entry, and so on (the
 * last entry repeats).
 */
const script = new Map<string, FixtureAnswer[]>();
const calls = new Map<string, number>();
function answer(path: string): FixtureAnswer {
  const txRef = path.split('/').pop() ?? '';
  const n = calls.get(txRef) ?? 0;
  calls.set(txRef, n + 1);
  const answers = script.get(txRef) ?? [{}];
  return answers[Math.min(n, answers.length - 1)] ?? {};
}
function tx(txRef: string, status: string, delayMs = 0): FixtureAnswer {
  return {
    delayMs,
    body: transactionBody({
      paymentRef: txRef,
      txStatus: status,
      txIsSucces: status === 'SUCCESSFUL',
    }),
  };
}

const TX = (txRef: string) => `{ transaction(txRef: "${txRef}") { txRef status } }`;
const VERIFY = (txRef: string) =>
  `mutation { verifyTransaction(txRef: "${txRef}") { txRef status } }`;
const statusOf = (body: { data?: Record<string, unknown> }, field: string) =>
  (body.data?.[field] as { status?: string } | undefined)?.status;

let bench: RedisBench;
let payment: Fixture;
let a: GatewayProcess;
let b: GatewayProcess;
let token: string;

beforeAll(async () => {
  if (skip) return;
  bench = await startRedisBench(0);
  payment = await startFixture((request) => answer(request.path));
  const upstreams = { paymentUrl: payment.url, kycUrl: bench.upstreams.kycUrl };
  const env = {
    CACHE_URL: bench.redis.url,
    CACHE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  };
  [a, b] = await spawnReplicas(upstreams, env);
  token = await testToken();
}, 30_000);

afterAll(async () => {
  await stopAllGateways();
  await payment?.close();
  await bench?.close();
});

describe.skipIf(skip)('records never go back in time, two processes on one Redis', () => {
  it('a slow read that began before verifyTransaction stored SUCCESSFUL does not store its PENDING', async () => {
    const txRef = `NT-MONO${Date.now()}`;
    // The first call (the slow read on A) answers PENDING after 1.5 s; later calls SUCCESSFUL.
    script.set(txRef, [tx(txRef, 'PENDING', 1500), tx(txRef, 'SUCCESSFUL')]);
    const slow = query(a, TX(txRef), token);
    // The slow read has reached the upstream (and is held there) before verifyTransaction asks.
    await until(() => (calls.get(txRef) ?? 0) >= 1, 10_000);
    const verified = await query(b, VERIFY(txRef), token);
    expect(statusOf(verified.body, 'verifyTransaction')).toBe('SUCCESSFUL');
    const late = await slow;
    // The slow read answers the record that stands, not the older answer it got.
    expect(statusOf(late.body, 'transaction')).toBe('SUCCESSFUL');
    for (const gateway of [a, b, a, b]) {
      expect(statusOf((await query(gateway, TX(txRef), token)).body, 'transaction')).toBe(
        'SUCCESSFUL',
      );
    }
    // Two upstream calls: the stored record serves every later read.
    expect(calls.get(txRef)).toBe(2);
  });

  it('a fresh read replaces a final transaction: SUCCESSFUL then REVERSED is REVERSED', async () => {
    const txRef = `NT-FINAL${Date.now()}`;
    script.set(txRef, [tx(txRef, 'SUCCESSFUL'), tx(txRef, 'REVERSED')]);
    expect(statusOf((await query(a, VERIFY(txRef), token)).body, 'verifyTransaction')).toBe(
      'SUCCESSFUL',
    );
    // The payment service now says REVERSED: that is what is answered and stored.
    expect(statusOf((await query(b, VERIFY(txRef), token)).body, 'verifyTransaction')).toBe(
      'UNKNOWN',
    );
    expect(statusOf((await query(a, TX(txRef), token)).body, 'transaction')).toBe('UNKNOWN');
    expect(calls.get(txRef)).toBe(2);
  });
});

describe('records never go back in time, one process (memory)', () => {
  it('a slow read that began before verifyTransaction does not overwrite its record', async () => {
    const txRef = 'NT-MEMMONO1';
    let n = 0;
    const { gateway, token: own } = await setup(() => {
      n += 1;
      return n === 1 ? tx(txRef, 'PENDING', 800) : tx(txRef, 'SUCCESSFUL');
    });
    const slow = query(gateway, TX(txRef), own);
    await until(() => n >= 1, 10_000);
    expect(statusOf((await query(gateway, VERIFY(txRef), own)).body, 'verifyTransaction')).toBe(
      'SUCCESSFUL',
    );
    expect(statusOf((await slow).body, 'transaction')).toBe('SUCCESSFUL');
    expect(statusOf((await query(gateway, TX(txRef), own)).body, 'transaction')).toBe('SUCCESSFUL');
    expect(n).toBe(2);
  });
});
