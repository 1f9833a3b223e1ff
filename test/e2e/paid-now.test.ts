/**
 * Paid means paid now: two `node src/main.ts` replicas on one real redis-server (no persistence,
 * as a careless deployment runs it), a fixture payment upstream whose answer for each reference
 * the test changes, and signed notifications.
 *
 * - A payment read as SUCCESSFUL and then reversed, refunded or charged back: `verifyTransaction`,
 *   `confirmPayment` (even for the order it confirmed), later reads on both replicas, a new
 *   subscriber and the fetch after a signed notification all say what the service says now.
 * - A sealed record captured from Redis and put back, as it was or with its clear order changed:
 *   verify and confirm still say what the service says; the altered value is not served, is
 *   counted as unreadable, and is replaced by the next fresh read.
 * - The claims lost while both replicas run (`FLUSHALL`, then a Redis restarted without
 *   persistence): no replica confirms a second order; both say why; `npm run claims:acknowledge`
 *   lets them confirm again. Each replica says at start that this Redis can lose claims.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import { type Fixture, kycBody, startFixture, transactionBody } from '../helpers/fixture.ts';
import {
  follow,
  type GatewayProcess,
  query,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';
import { runScript } from '../helpers/scripts.ts';
import { signWebhook } from '../helpers/webhook-signature.ts';

const skip = skipRedisTests('paid-now');

const KEY = Buffer.alloc(32, 7).toString('base64');
const SECRET = 'whsec_test_paid_now_0123456789abcdef';

/** The status the payment service answers now, per reference (SUCCESSFUL when not set). */
const statuses = new Map<string, string>();

let redis: TestRedis;
let payment: Fixture;
let kyc: Fixture;
let a: GatewayProcess;
let b: GatewayProcess;
let token: string;

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  payment = await startFixture((request) => {
    const txRef = request.path.split('/').pop() ?? '';
    const status = statuses.get(txRef) ?? 'SUCCESSFUL';
    return {
      body: transactionBody({
        paymentRef: txRef,
        amount: '1000.50',
        txStatus: status,
        txIsSucces: status === 'SUCCESSFUL',
      }),
    };
  });
  kyc = await startFixture(() => ({ body: kycBody() }));
  const env = {
    CACHE_URL: redis.url,
    CACHE_ENCRYPTION_KEY: KEY,
    CACHE_COMMAND_TIMEOUT_MS: '1000',
    WEBHOOK_SECRET: SECRET,
  };
  const upstreams = { paymentUrl: payment.url, kycUrl: kyc.url };
  // One after the other: the first creates the claims ledger, the second finds it.
  a = await spawnGateway(upstreams, env);
  b = await spawnGateway(upstreams, env);
  token = await testToken('merchant-backend', 'transactions:read');
}, 30_000);

afterAll(async () => {
  await stopAllGateways();
  await payment?.close();
  await kyc?.close();
  await redis?.stop();
});

interface Tx {
  status: string;
  rawStatus: string;
  succeeded: boolean;
}

const FIELDS = 'status rawStatus succeeded';

async function read(gateway: GatewayProcess, txRef: string): Promise<Tx> {
  const answer = await query(gateway, `{ transaction(txRef: "${txRef}") { ${FIELDS} } }`, token);
  return answer.body.data?.transaction as Tx;
}

async function verify(gateway: GatewayProcess, txRef: string): Promise<Tx> {
  const text = `mutation { verifyTransaction(txRef: "${txRef}") { ${FIELDS} } }`;
  return (await query(gateway, text, token)).body.data?.verifyTransaction as Tx;
}

interface Confirmation {
  confirmed?: boolean;
  problems?: string[];
  errors?: Array<{ message: string; extensions?: { code?: string; reason?: string } }>;
}

async function confirm(gateway: GatewayProcess, txRef: string, order: string) {
  const text = `mutation { confirmPayment(txRef: "${txRef}", order: { id: "${order}", amount: "1000.50", currency: "NGN" }) { confirmed problems } }`;
  const { body } = await query(gateway, text, token);
  const answer = body.data?.confirmPayment as Confirmation | null | undefined;
  return { ...answer, errors: body.errors as Confirmation['errors'] };
}

async function notify(gateway: GatewayProcess, txRef: string): Promise<number> {
  const body = JSON.stringify({ event: 'PAYMENT_UPDATED', data: { txRef } });
  const response = await fetch(`${gateway.url}/webhooks/payment`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-webhook-signature': signWebhook(body, [SECRET]),
    },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  await response.text();
  return response.status;
}

/** The raw value Redis holds for a transaction's record (its key found by the reference). */
async function rawRecord(txRef: string): Promise<{ key: string; value: string }> {
  const keys = (await redis.command(['KEYS', `*:tx:*${txRef}`])) as string[];
  expect(keys).toHaveLength(1);
  const key = keys[0] ?? '';
  return { key, value: String(await redis.command(['GET', key])) };
}

describe.skipIf(skip)('a payment reversed after it was read as SUCCESSFUL', () => {
  for (const reversal of ['REVERSED', 'REFUNDED', 'CHARGEBACK']) {
    it(`${reversal}: verify, confirm (its own order too) and later reads on both replicas say so`, async () => {
      const txRef = `NT-${reversal}${Date.now()}`;
      expect(await read(a, txRef)).toEqual({
        status: 'SUCCESSFUL',
        rawStatus: 'SUCCESSFUL',
        succeeded: true,
      });
      expect(await confirm(a, txRef, 'order-A')).toMatchObject({ confirmed: true, problems: [] });
      statuses.set(txRef, reversal);
      const now = { status: 'UNKNOWN', rawStatus: reversal, succeeded: false };
      expect(await verify(b, txRef)).toEqual(now);
      // Judged on the record fetched for this call: not paid, even for the order it confirmed.
      expect(await confirm(a, txRef, 'order-A')).toMatchObject({
        confirmed: false,
        problems: ['NOT_SUCCESSFUL'],
      });
      expect(await confirm(b, txRef, 'order-B')).toMatchObject({
        confirmed: false,
        problems: ['NOT_SUCCESSFUL', 'ALREADY_CONFIRMED_FOR_ANOTHER_ORDER'],
      });
      // The fresh record was stored: every later read, on either replica, says it.
      for (const gateway of [a, b, a, b]) expect(await read(gateway, txRef)).toEqual(now);
    });
  }

  it('a new subscriber is told the reversal, not the SUCCESSFUL record the cache holds', async () => {
    const txRef = `NT-SUBREV${Date.now()}`;
    expect((await read(a, txRef)).status).toBe('SUCCESSFUL');
    statuses.set(txRef, 'REVERSED');
    const followed = follow(b, txRef, token);
    try {
      await followed.first;
      expect(followed.errors).toEqual([]);
      expect(followed.statuses).toEqual(['UNKNOWN']);
    } finally {
      followed.stop();
    }
  });

  it('a signed notification of the refund replaces the SUCCESSFUL record on both replicas', async () => {
    const txRef = `NT-HOOKREV${Date.now()}`;
    expect((await read(a, txRef)).status).toBe('SUCCESSFUL');
    expect((await read(b, txRef)).status).toBe('SUCCESSFUL');
    statuses.set(txRef, 'REFUNDED');
    expect(await notify(b, txRef)).toBe(202);
    // The notification is answered at once; the record is fetched right after.
    await until(async () => (await read(a, txRef)).rawStatus === 'REFUNDED', 10_000);
    expect(await read(b, txRef)).toEqual({
      status: 'UNKNOWN',
      rawStatus: 'REFUNDED',
      succeeded: false,
    });
  });
});

describe.skipIf(skip)('a sealed record put back in Redis by a party without the key', () => {
  it('as it was, or with its order changed: verify and confirm say what the service says', async () => {
    const txRef = `NT-PUTBACK${Date.now()}`;
    expect((await verify(a, txRef)).status).toBe('SUCCESSFUL');
    const captured = await rawRecord(txRef);
    expect(captured.value).toMatch(/^m:\d+\|gwe1:/);
    statuses.set(txRef, 'FAILED');
    expect((await verify(b, txRef)).status).toBe('FAILED');

    const failed = { status: 'FAILED', rawStatus: 'FAILED', succeeded: false };
    const later = String(Date.now() + 10 * 365 * 86_400_000);
    const pinned = captured.value.replace(/^m:\d+/, `m:${later}`);
    for (const [name, value] of [
      ['as it was', captured.value],
      ['with a later order in clear', pinned],
    ] as const) {
      await redis.command(['SET', captured.key, value]);
      expect(await verify(a, txRef), name).toEqual(failed);
      expect(await confirm(b, txRef, `order-${name.length}`), name).toMatchObject({
        confirmed: false,
        problems: ['NOT_SUCCESSFUL'],
      });
      // The fresh read replaced the value put back: cached reads say FAILED on both replicas.
      expect(await read(a, txRef), name).toEqual(failed);
      expect(await read(b, txRef), name).toEqual(failed);
    }
    // The altered value was seen for what it is (on whichever replica met it first).
    const unreadable = async (gateway: GatewayProcess) =>
      gateway.metric('gateway_cache_events_total', { kind: 'transaction', outcome: 'unreadable' });
    expect((await unreadable(a)) + (await unreadable(b))).toBeGreaterThan(0);
  });

  it('a value pinned with a later order is not served to a cached read either', async () => {
    const txRef = `NT-PINNED${Date.now()}`;
    expect((await read(a, txRef)).status).toBe('SUCCESSFUL');
    const captured = await rawRecord(txRef);
    statuses.set(txRef, 'FAILED');
    const later = String(Date.now() + 10 * 365 * 86_400_000);
    await redis.command(['SET', captured.key, captured.value.replace(/^m:\d+/, `m:${later}`)]);
    // Unreadable: a miss, read fresh from the service, and stored over the pinned value.
    expect((await read(b, txRef)).status).toBe('FAILED');
    expect((await rawRecord(txRef)).value).not.toContain(`m:${later}|`);
    expect((await read(a, txRef)).status).toBe('FAILED');
  });
});

/** Runs `npm run claims:acknowledge` (its script) against the test's Redis. */
function acknowledge(args: string[]): Promise<{ code: number | null; output: string }> {
  return runScript('scripts/claims-acknowledge.ts', args, { CACHE_URL: redis.url });
}

/** The claims ledger's key under the default key prefix. */
const LEDGER = 'gw:{confirm:v2}:ledger';
const SUSPENDED = { code: 'UPSTREAM_UNAVAILABLE', reason: 'CLAIMS_UNVERIFIED' };

/** How many times a replica's output has said that confirmations are suspended. */
function suspensionsTold(output: string): number {
  return output.split('payment confirmations: SUSPENDED').length - 1;
}

describe.skipIf(skip)('claims lost while both replicas run', () => {
  it('each replica said at start that this Redis can lose claims', () => {
    for (const gateway of [a, b]) {
      expect(gateway.output()).toContain('this Redis can lose claims');
      expect(gateway.output()).toContain('appendonly is not yes');
    }
  });

  it('after FLUSHALL no replica confirms a second order, until an operator acknowledges it', async () => {
    const txRef = `NT-FLUSHED${Date.now()}`;
    expect(await confirm(a, txRef, 'order-A')).toMatchObject({ confirmed: true });
    const refusedBefore = await b.metric('gateway_payment_confirmations_total', {
      outcome: 'refused',
    });
    await redis.command(['FLUSHALL']);
    for (const [gateway, order] of [
      [b, 'order-B'],
      [a, 'order-B'],
      [a, 'order-A'],
    ] as const) {
      const answer = await confirm(gateway, txRef, order);
      expect(answer.confirmed, order).toBeUndefined();
      expect(answer.errors?.[0]?.extensions).toMatchObject(SUSPENDED);
      expect(answer.errors?.[0]?.message).toMatch(/emptied or replaced/);
    }
    expect(
      await b.metric('gateway_payment_confirmations_total', { outcome: 'refused' }),
    ).toBeGreaterThan(refusedBefore);
    expect(b.output()).toContain('payment confirmations: SUSPENDED');
    // The ledger says lost for every replica, one started after the loss included.
    expect(String(await redis.command(['GET', LEDGER]))).toMatch(/^lost:/);

    // Looking first changes nothing; acknowledging lets both confirm again.
    const look = await acknowledge([]);
    expect(look.code).toBe(0);
    expect(look.output).toContain('LOST since');
    expect((await confirm(b, txRef, 'order-B')).errors?.[0]?.extensions).toMatchObject(SUSPENDED);
    const done = await acknowledge(['--yes']);
    expect(done.code, done.output).toBe(0);
    expect(done.output).toContain('acknowledged');
    expect(await confirm(b, txRef, 'order-B')).toMatchObject({ confirmed: true });
    expect(await confirm(a, txRef, 'order-A')).toMatchObject({
      confirmed: false,
      problems: ['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER'],
    });
  });

  it('after a Redis restart without persistence, found at reconnection: nothing confirmed', async () => {
    const txRef = `NT-RESTART${Date.now()}`;
    expect(await confirm(a, txRef, 'order-A')).toMatchObject({ confirmed: true });
    const toldBefore = [a, b].map((gateway) => suspensionsTold(gateway.output()));
    await redis.stop('SIGKILL');
    await redis.start();
    // Each replica checks the ledger as it reconnects, before any confirmation asks, and says
    // so once. Until a replica has reconnected, its confirmations fail as Redis being down (no
    // confirmation either, but not this reason): wait for both, not for the first to mark it.
    await until(async () => {
      const marker = await redis.command(['GET', LEDGER]).catch(() => null);
      return (
        typeof marker === 'string' &&
        marker.startsWith('lost:') &&
        [a, b].every((gateway, i) => suspensionsTold(gateway.output()) > (toldBefore[i] ?? 0))
      );
    }, 15_000);
    for (const gateway of [a, b]) {
      const answer = await confirm(gateway, txRef, 'order-B');
      expect(answer.errors?.[0]?.extensions).toMatchObject(SUSPENDED);
    }
    expect((await acknowledge(['--yes'])).code).toBe(0);
    expect(await confirm(b, txRef, 'order-B')).toMatchObject({ confirmed: true });
  });
});
