/**
 * The in-memory claims of `confirmPayment` (no CACHE_URL): one order per payment, kept for the
 * retention and then forgotten, bounded in entries (oldest dropped first); and the setting that
 * sets the retention.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { ClaimsUnverifiedError, MemoryClaimStore } from '../../src/payments/claims.ts';

describe('MemoryClaimStore', () => {
  it('holds a payment for its first order until the retention is over', async () => {
    let now = 1_000_000;
    const claims = new MemoryClaimStore(60_000, { maxEntries: 100, now: () => now });
    expect(await claims.claim('NT-A1', 'order-1')).toBe(true);
    expect(await claims.claim('NT-A1', 'order-1')).toBe(true);
    expect(await claims.claim('NT-A1', 'order-2')).toBe(false);
    expect(await claims.heldByAnother('NT-A1', 'order-2')).toBe(true);
    expect(await claims.heldByAnother('NT-A1', 'order-1')).toBe(false);
    expect(await claims.heldByAnother('NT-B1', 'order-1')).toBe(false);
    now += 59_999;
    expect(await claims.claim('NT-A1', 'order-2')).toBe(false);
    now += 1;
    expect(await claims.heldByAnother('NT-A1', 'order-2')).toBe(false);
    expect(await claims.claim('NT-A1', 'order-2')).toBe(true);
  });

  it('drops the oldest claims past its bound', async () => {
    const claims = new MemoryClaimStore(60_000, { maxEntries: 3 });
    for (const ref of ['NT-1', 'NT-2', 'NT-3', 'NT-4']) {
      expect(await claims.claim(ref, `order-${ref}`)).toBe(true);
    }
    expect(await claims.heldByAnother('NT-1', 'other')).toBe(false);
    expect(await claims.heldByAnother('NT-2', 'other')).toBe(true);
    expect(await claims.heldByAnother('NT-4', 'other')).toBe(true);
  });
});

describe('CONFIRMATION_RETENTION_DAYS', () => {
  const base = { SANDBOX: 'true', AUTH_DISABLED: 'true' };

  it('defaults to 400 days and takes 1 to 36500', () => {
    expect(loadConfig(base).confirmationRetentionDays).toBe(400);
    expect(
      loadConfig({ ...base, CONFIRMATION_RETENTION_DAYS: '30' }).confirmationRetentionDays,
    ).toBe(30);
  });

  it.each(['0', '-1', '36501', '1.5', 'a year'])('refuses %s, naming the variable', (value) => {
    expect(() => loadConfig({ ...base, CONFIRMATION_RETENTION_DAYS: value })).toThrow(ConfigError);
    try {
      loadConfig({ ...base, CONFIRMATION_RETENTION_DAYS: value });
    } catch (error) {
      expect((error as ConfigError).variable).toBe('CONFIRMATION_RETENTION_DAYS');
    }
  });
});

describe("MemoryClaimStore in production (claims in one process's memory refused)", () => {
  it('confirms nothing: every claim and read throws CLAIMS_UNVERIFIED', async () => {
    const claims = new MemoryClaimStore(60_000, { refuse: true });
    for (const attempt of [
      () => claims.claim('NT-A1', 'order-1'),
      () => claims.heldByAnother('NT-A1', 'order-1'),
    ]) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ClaimsUnverifiedError);
      expect((error as ClaimsUnverifiedError).extensions).toMatchObject({
        code: 'UPSTREAM_UNAVAILABLE',
        reason: 'CLAIMS_UNVERIFIED',
      });
    }
  });
});
