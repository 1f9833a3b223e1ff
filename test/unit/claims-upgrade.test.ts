/**
 * Claims of the previous key layout (`<prefix>:confirm:v1:…`, before the claims and their ledger
 * shared a hash tag) are not carried over: a replica that finds the old ledger and no ledger of
 * this layout marks the ledger lost and confirms nothing until an operator acknowledges, which
 * also deletes the old ledger. On a real redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { businessNamespace } from '../../src/app.ts';
import {
  CLAIMS_LEGACY_LEDGER,
  CLAIMS_NAMESPACE,
  CLAIMS_SINGLE_BUSINESS_LEDGER,
  ClaimsUnverifiedError,
  RedisClaimStore,
} from '../../src/payments/claims.ts';
import { RedisLedger } from '../../src/state/claims.ts';
import { RedisConnection } from '../../src/state/redis.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';

const skip = skipRedisTests('claims-upgrade');
const DAY_MS = 86_400_000;
let redis: TestRedis;
let connection: RedisConnection;

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  connection = new RedisConnection(
    { url: redis.url, connectTimeoutMs: 1000, commandTimeoutMs: 1000, keyPrefix: 'up' },
    { state: () => {}, error: () => {} },
  );
  expect(await connection.connected(5000)).toBe(true);
});

/** The claims' ledger as the gateway builds it. */
const ledger = () => new RedisLedger(connection, CLAIMS_NAMESPACE, CLAIMS_LEGACY_LEDGER);
/** A business's ledger, with a businesses file, as the gateway builds it. */
const businessLedger = (id: string) =>
  new RedisLedger(
    connection,
    [businessNamespace(id), ...CLAIMS_NAMESPACE],
    CLAIMS_SINGLE_BUSINESS_LEDGER,
  );

afterAll(async () => {
  await connection?.close();
  await redis?.stop();
});

describe.skipIf(skip)('claims after the key layout changed', () => {
  it('a fresh store starts a ledger under the claims hash tag', async () => {
    expect(ledger().ledgerName()).toBe('up:{confirm:v2}:ledger');
  });

  it('the old ledger present: lost, nothing confirmed; acknowledged: confirms, the old ledger gone', async () => {
    await redis.command(['FLUSHALL']);
    await redis.command(['SET', 'up:confirm:v1:ledger', 'e:from-the-old-layout']);
    let lostTold = 0;
    const store = new RedisClaimStore(ledger(), DAY_MS, undefined, () => {
      lostTold += 1;
    });
    expect((await store.inspect()).ledger).toBe('lost');
    expect(lostTold).toBe(1);
    await expect(store.claim('NT-UPGRADE1', 'order-1')).rejects.toBeInstanceOf(
      ClaimsUnverifiedError,
    );
    // A second replica starting now finds it lost too (the marker is in Redis).
    expect((await new RedisClaimStore(ledger(), DAY_MS).inspect()).ledger).toBe('lost');

    await ledger().acknowledge();
    expect(await redis.command(['EXISTS', 'up:confirm:v1:ledger'])).toBe(0);
    expect(await store.claim('NT-UPGRADE1', 'order-1')).toBe(true);
    expect(await store.claim('NT-UPGRADE1', 'order-2')).toBe(false);
    expect(await redis.command(['EXISTS', 'up:{confirm:v2}:ledger'])).toBe(1);
  });

  it('no old ledger: a new one, and claims at once', async () => {
    await redis.command(['FLUSHALL']);
    const store = new RedisClaimStore(ledger(), DAY_MS);
    expect((await store.inspect()).ledger).toBe('new');
    expect(await store.claim('NT-UPGRADE2', 'order-1')).toBe(true);
  });

  it('moving from one business to a file: each business confirms nothing until acknowledged', async () => {
    await redis.command(['FLUSHALL']);
    // The one business claimed a payment before the gateway was given a file.
    const single = new RedisClaimStore(ledger(), DAY_MS);
    expect(await single.claim('NT-MOVED1', 'order-1')).toBe(true);
    const shopA = new RedisClaimStore(businessLedger('shop-a'), DAY_MS);
    const shopB = new RedisClaimStore(businessLedger('shop-b'), DAY_MS);
    expect((await shopA.inspect()).ledger).toBe('lost');
    expect((await shopB.inspect()).ledger).toBe('lost');
    // The claim above is not under either namespace: confirming it again must not succeed.
    await expect(shopA.claim('NT-MOVED1', 'order-2')).rejects.toBeInstanceOf(ClaimsUnverifiedError);
    await businessLedger('shop-a').acknowledge();
    expect(await shopA.claim('NT-MOVED1', 'order-1')).toBe(true);
    // Acknowledging one business acknowledges no other.
    await expect(shopB.claim('NT-MOVED2', 'order-1')).rejects.toBeInstanceOf(ClaimsUnverifiedError);
    await businessLedger('shop-b').acknowledge();
    expect(await shopB.claim('NT-MOVED2', 'order-1')).toBe(true);
  });

  it('a file on a Redis the one business never used: each business starts a new ledger', async () => {
    await redis.command(['FLUSHALL']);
    const store = new RedisClaimStore(businessLedger('shop-c'), DAY_MS);
    expect((await store.inspect()).ledger).toBe('new');
    expect(businessLedger('shop-c').ledgerName()).toBe('up:biz:shop-c:{confirm:v2}:ledger');
    expect(await store.claim('NT-FRESH1', 'order-1')).toBe(true);
  });
});
