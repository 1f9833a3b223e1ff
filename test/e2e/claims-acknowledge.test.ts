/**
 * `npm run claims:acknowledge` with several businesses: `--business <id>` looks at and
 * acknowledges that business's claims ledger alone (under its namespace, where its gateway
 * keeps it), never another's; with `BUSINESSES_FILE` set it must name
 * one; a malformed id or option is refused before Redis is asked anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';
import { runScript } from '../helpers/scripts.ts';

const skip = skipRedisTests('claims-acknowledge');

/** The ledgers under the default key prefix: the one business's, and two of several. */
const SINGLE = 'gw:{confirm:v2}:ledger';
const SHOP_A = 'gw:biz:shop-a:{confirm:v2}:ledger';
const SHOP_B = 'gw:biz:shop-b:{confirm:v2}:ledger';

let redis: TestRedis;
beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

function acknowledge(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return runScript('scripts/claims-acknowledge.ts', args, { CACHE_URL: redis.url, ...env });
}

describe.skipIf(skip)('claims:acknowledge --business', () => {
  it("acknowledges that business's lost ledger alone", async () => {
    await redis.command(['SET', SINGLE, 'e:single']);
    await redis.command(['SET', SHOP_A, 'lost:2026-11-26T00:00:00.000Z']);
    await redis.command(['SET', SHOP_B, 'lost:2026-11-26T00:00:00.000Z']);

    const look = await acknowledge(['--business', 'shop-a']);
    expect(look.code).toBe(0);
    expect(look.output).toContain('claims ledger of business shop-a: LOST since');
    expect(look.output).toContain('Nothing written');
    expect(await redis.command(['GET', SHOP_A])).toBe('lost:2026-11-26T00:00:00.000Z');

    const done = await acknowledge(['--business', 'shop-a', '--yes']);
    expect(done.code).toBe(0);
    expect(done.output).toContain('acknowledged of business shop-a');
    expect(String(await redis.command(['GET', SHOP_A]))).toMatch(/^a:/);
    // Another business's ledger is left as it was (still lost: acknowledged on its own). The
    // single-business ledger, which made each business's missing ledger read as lost, goes with
    // the acknowledgement (as the previous layout's ledger does).
    expect(await redis.command(['GET', SHOP_B])).toBe('lost:2026-11-26T00:00:00.000Z');
    expect(await redis.command(['GET', SINGLE])).toBeNull();
  });

  it('must name a business when BUSINESSES_FILE is set, and refuses a malformed id or option', async () => {
    const keys = async () => (await redis.command(['KEYS', '*'])) as string[];
    const before = (await keys()).sort();
    const unnamed = await acknowledge(['--yes'], {
      BUSINESSES_FILE: '/etc/gateway/businesses.json',
    });
    expect(unnamed.code).toBe(2);
    expect(unnamed.output).toContain('name one with --business <id>');
    const malformed = await acknowledge(['--business', 'shop a:*', '--yes']);
    expect(malformed.code).toBe(2);
    expect(malformed.output).toContain('--business');
    const unknown = await acknowledge(['--businesss', 'shop-a']);
    expect(unknown.code).toBe(2);
    expect(unknown.output).toContain('Usage: npm run claims:acknowledge');
    expect((await keys()).sort()).toEqual(before);
  });
});
