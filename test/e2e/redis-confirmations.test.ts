/**
 * One payment, one order, across replicas and a Redis restart: two `node src/main.ts` processes
 * share one real redis-server with persistence on (append-only file, fsync on every write, in a
 * temporary directory) and one fixture payment upstream.
 *
 * - 50 concurrent confirmations of one transaction for 50 orders, spread over both processes:
 *   exactly one is confirmed (several rounds, each on a new transaction).
 * - The claim lives under a key that names neither payment nor order, sealed with
 *   CACHE_ENCRYPTION_KEY (no order id in clear), kept CONFIRMATION_RETENTION_DAYS.
 * - redis-server killed (SIGKILL) and started again: the claim is still there. While it is down,
 *   confirmations fail (UPSTREAM_UNAVAILABLE) and confirm nothing.
 * - A claim sealed with another key, copied under another payment's key, or forged in clear,
 *   does not open: nothing is confirmed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashedKeyPart } from '../../src/state/redis.ts';
import { type Fixture, kycBody, startFixture, transactionBody } from '../helpers/fixture.ts';
import {
  type GatewayProcess,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';

const skip = skipRedisTests('redis-confirmations');

const KEY = Buffer.alloc(32, 7).toString('base64');
const OTHER_KEY = Buffer.alloc(32, 9).toString('base64');
const ROUNDS = 5;
const LEDGER = 'gw:{confirm:v2}:ledger';
const CONCURRENT = 50;

let dir: string;
let redis: TestRedis;
let payment: Fixture;
let kyc: Fixture;
let a: GatewayProcess;
let b: GatewayProcess;
let token: string;

const upstreams = () => ({ paymentUrl: payment.url, kycUrl: kyc.url });

beforeAll(async () => {
  if (skip) return;
  dir = await mkdtemp(join(tmpdir(), 'gw-confirm-redis-'));
  redis = await startRedis({ persistDir: dir });
  payment = await startFixture((request) => ({
    // Slow enough that the confirmations of a round all wait for the record together.
    delayMs: 100,
    body: transactionBody({ paymentRef: request.path.split('/').pop(), amount: '1000.50' }),
  }));
  kyc = await startFixture(() => ({ body: kycBody() }));
  const env = { CACHE_URL: redis.url, CACHE_ENCRYPTION_KEY: KEY, CACHE_COMMAND_TIMEOUT_MS: '1000' };
  [a, b] = await Promise.all([spawnGateway(upstreams(), env), spawnGateway(upstreams(), env)]);
  token = await testToken('merchant-backend', 'transactions:read');
}, 30_000);

afterAll(async () => {
  await stopAllGateways();
  await payment?.close();
  await kyc?.close();
  await redis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Answer {
  confirmed: boolean;
  problems: string[];
}

const CONFIRM = `mutation($txRef: ID!, $order: OrderInput!) {
  confirmPayment(txRef: $txRef, order: $order) { confirmed problems }
}`;

/** One confirmation through HTTP; resolves to the answer, or the error codes. */
async function confirm(
  gateway: GatewayProcess,
  txRef: string,
  orderId: string,
): Promise<{ answer?: Answer; codes: unknown[] }> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      query: CONFIRM,
      variables: { txRef, order: { id: orderId, amount: '1000.50', currency: 'NGN' } },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as {
    data?: { confirmPayment: Answer } | null;
    errors?: Array<{ extensions?: { code?: unknown } }>;
  };
  return {
    ...(body.data?.confirmPayment && { answer: body.data.confirmPayment }),
    codes: (body.errors ?? []).map((error) => error.extensions?.code),
  };
}

/** Every key in Redis. */
async function keys(): Promise<string[]> {
  return (await redis.command(['KEYS', '*'])) as string[];
}

/** The key of a payment's claim: the gateway's own hash of the reference. */
const claimKey = (txRef: string) => `gw:{confirm:v2}:${hashedKeyPart(txRef)}`;

/** The claim keys (the only keys under `gw:confirm:`). */
async function claimKeys(): Promise<string[]> {
  return (await keys()).filter((key) => key.startsWith('gw:{confirm:v2}:') && key !== LEDGER);
}

describe.skipIf(skip)('confirmPayment claims over two processes and one Redis', () => {
  const winners: Array<{ txRef: string; orderId: string }> = [];

  it(`${CONCURRENT} concurrent confirmations of one transaction for ${CONCURRENT} orders over two processes: exactly one confirmed (${ROUNDS} rounds)`, async () => {
    const confirmedBefore =
      (await a.metric('gateway_payment_confirmations_total', { outcome: 'confirmed' })) +
      (await b.metric('gateway_payment_confirmations_total', { outcome: 'confirmed' }));
    for (let round = 0; round < ROUNDS; round += 1) {
      const txRef = `NT-RACE${round}T${Date.now()}`;
      const orders = Array.from({ length: CONCURRENT }, (_, i) => `order-${round}-${i}`);
      const results = await Promise.all(
        orders.map((orderId, i) => confirm(i % 2 === 0 ? a : b, txRef, orderId)),
      );
      expect(results.flatMap((result) => result.codes)).toEqual([]);
      const won = orders.filter((_, i) => results[i]?.answer?.confirmed);
      expect(won).toHaveLength(1);
      for (const [i, result] of results.entries()) {
        if (orders[i] === won[0]) expect(result.answer?.problems).toEqual([]);
        else expect(result.answer?.problems).toEqual(['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER']);
      }
      const orderId = won[0] ?? '';
      winners.push({ txRef, orderId });
      // The winner asking again, on either process, gets the same answer.
      for (const gateway of [a, b]) {
        expect((await confirm(gateway, txRef, orderId)).answer).toEqual({
          confirmed: true,
          problems: [],
        });
      }
    }
    const confirmedAfter =
      (await a.metric('gateway_payment_confirmations_total', { outcome: 'confirmed' })) +
      (await b.metric('gateway_payment_confirmations_total', { outcome: 'confirmed' }));
    // One winner per round, and its two idempotent repeats.
    expect(confirmedAfter - confirmedBefore).toBe(ROUNDS * 3);
    console.info(
      `redis-confirmations: ${ROUNDS} rounds × ${CONCURRENT} concurrent confirmations over 2 processes → ${winners.length} confirmed, 1 per round`,
    );
  }, 60_000);

  it('keeps the claim under a key naming neither payment nor order, sealed, for CONFIRMATION_RETENTION_DAYS', async () => {
    const all = await keys();
    const claims = await claimKeys();
    expect(claims).toHaveLength(ROUNDS);
    // Beside them the ledger, which tells the replicas that no claim was lost: kept for good.
    expect(String(await redis.command(['GET', LEDGER]))).toMatch(/^e:[0-9a-f-]{36}$/);
    expect(Number(await redis.command(['PTTL', LEDGER]))).toBe(-1);
    for (const { txRef, orderId } of winners) {
      expect(all.join('\n')).not.toContain(orderId);
      // The record cache names the reference (as before); the claim keys never do.
      expect(claims.join('\n')).not.toContain(txRef);
    }
    for (const key of claims) {
      const value = String(await redis.command(['GET', key]));
      expect(value).toMatch(/^gwe1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]+$/);
      expect(value).not.toMatch(/order-/);
      const pttl = Number(await redis.command(['PTTL', key]));
      expect(pttl).toBeGreaterThan(400 * 86_400_000 - 120_000);
      expect(pttl).toBeLessThanOrEqual(400 * 86_400_000);
    }
  });

  it('a claim copied under another payment does not open: nothing is confirmed', async () => {
    const [first] = winners;
    if (!first) throw new Error('no winner');
    // A fresh payment claimed by one order; the first round's sealed claim copied over its claim.
    const txRef = `NT-COPY${Date.now()}`;
    expect((await confirm(a, txRef, 'order-copy')).answer?.confirmed).toBe(true);
    const target = claimKey(txRef);
    expect(await claimKeys()).toContain(target);
    expect(await redis.command(['COPY', claimKey(first.txRef), target, 'REPLACE'])).toBe(1);
    for (const orderId of [first.orderId, 'order-copy']) {
      const copied = await confirm(b, txRef, orderId);
      expect(copied.answer).toBeUndefined();
      expect(copied.codes).toEqual(['INTERNAL_SERVER_ERROR']);
    }
    // A claim forged in clear by a party that can write to Redis but lacks the key: refused too.
    const forged = `NT-FORGED${Date.now()}`;
    await redis.command([
      'SET',
      claimKey(forged),
      JSON.stringify({ orderId: 'order-attacker', confirmedAt: Date.now() }),
    ]);
    for (const orderId of ['order-attacker', 'order-honest']) {
      expect((await confirm(a, forged, orderId)).codes).toEqual(['INTERNAL_SERVER_ERROR']);
    }
  });

  it('a gateway with another CACHE_ENCRYPTION_KEY cannot read the claims: it confirms nothing', async () => {
    const stranger = await spawnGateway(upstreams(), {
      CACHE_URL: redis.url,
      CACHE_ENCRYPTION_KEY: OTHER_KEY,
      // As for the two others: a command slower than the default 250 ms on a busy machine makes
      // Redis count as down (UPSTREAM_UNAVAILABLE), which is not what this test is about.
      CACHE_COMMAND_TIMEOUT_MS: '1000',
    });
    const { txRef, orderId } = winners[0] ?? { txRef: '', orderId: '' };
    for (const id of [orderId, 'order-stranger']) {
      const result = await confirm(stranger, txRef, id);
      expect(result.answer).toBeUndefined();
      expect(result.codes).toEqual(['INTERNAL_SERVER_ERROR']);
    }
    expect(stranger.output()).not.toContain(orderId);
    await stranger.stop('SIGKILL');
  }, 30_000);

  it('redis-server killed and started again (appendonly, appendfsync always) keeps every claim; while down, nothing is confirmed', async () => {
    const [{ txRef, orderId }] = winners as [{ txRef: string; orderId: string }];
    await redis.stop('SIGKILL');
    const fresh = `NT-DOWN${Date.now()}`;
    const down = await confirm(a, fresh, 'order-while-down');
    expect(down.answer).toBeUndefined();
    expect(down.codes).toEqual(['UPSTREAM_UNAVAILABLE']);

    await redis.start();
    // Both processes reconnect on their own within about a second.
    const until = Date.now() + 10_000;
    let other = await confirm(b, txRef, 'order-after-restart');
    while (other.codes.length > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      other = await confirm(b, txRef, 'order-after-restart');
    }
    expect(other.answer).toEqual({
      confirmed: false,
      problems: ['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER'],
    });
    expect((await claimKeys()).length).toBeGreaterThanOrEqual(ROUNDS);
    let again = await confirm(a, txRef, orderId);
    while (again.codes.length > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      again = await confirm(a, txRef, orderId);
    }
    expect(again.answer).toEqual({ confirmed: true, problems: [] });
    // The confirmation tried while Redis was down claimed nothing: another order may have it.
    expect((await confirm(b, fresh, 'order-after-outage')).answer?.confirmed).toBe(true);
  }, 30_000);
});
