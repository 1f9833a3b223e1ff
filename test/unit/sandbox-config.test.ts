/**
 * `npm run sandbox` with `BUSINESSES_FILE`: the simulators expect each business's credentials
 * of the file (read as the gateway reads it, values from the environment too), so that a gateway
 * beside them with the same file finds every account; refused as the gateway refuses it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadSandboxConfig } from '../../src/config.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function businessesFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-config-'));
  dirs.push(dir);
  const file = join(dir, 'businesses.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const FILE = {
  businesses: [
    {
      id: 'shop-a',
      paymentAccessToken: { env: 'SHOP_A_PAYMENT_TOKEN' },
      kycSecretKey: 'shop-a-kyc-secret',
      kycPublicKey: 'pk_shop_a',
      kycBusinessSlug: 'shop-a',
      webhookSecret: { env: 'SHOP_A_WEBHOOK_SECRET' },
    },
    {
      id: 'shop-b',
      paymentAccessToken: 'shop-b-payment-token',
      kycSecretKey: 'shop-b-kyc-secret',
      kycPublicKey: 'pk_shop_b',
      kycBusinessSlug: 'shop-b',
    },
  ],
};

describe('loadSandboxConfig with BUSINESSES_FILE', () => {
  it('serves each business of the file with its credentials (not its webhook secret)', () => {
    const config = loadSandboxConfig({
      BUSINESSES_FILE: businessesFile(FILE),
      SHOP_A_PAYMENT_TOKEN: 'shop-a-payment-token',
      SHOP_A_WEBHOOK_SECRET: 'shop-a-webhook-secret-0123456789',
    });
    expect(config).toEqual({
      host: '127.0.0.1',
      paymentPort: 4010,
      kycPort: 4020,
      slowMs: 10_000,
      businesses: [
        {
          id: 'shop-a',
          paymentAccessToken: 'shop-a-payment-token',
          kycSecretKey: 'shop-a-kyc-secret',
          kycPublicKey: 'pk_shop_a',
          kycBusinessSlug: 'shop-a',
        },
        {
          id: 'shop-b',
          paymentAccessToken: 'shop-b-payment-token',
          kycSecretKey: 'shop-b-kyc-secret',
          kycPublicKey: 'pk_shop_b',
          kycBusinessSlug: 'shop-b',
        },
      ],
    });
  });

  it('refuses the single-business credentials beside it, and a variable the file names that is unset', () => {
    const file = businessesFile(FILE);
    const beside = () =>
      loadSandboxConfig({
        BUSINESSES_FILE: file,
        SHOP_A_PAYMENT_TOKEN: 'shop-a-payment-token',
        SHOP_A_WEBHOOK_SECRET: 'shop-a-webhook-secret-0123456789',
        PAYMENT_ACCESS_TOKEN: 'one-token-for-whom',
      });
    expect(beside).toThrow(ConfigError);
    expect(beside).toThrow(/PAYMENT_ACCESS_TOKEN.*BUSINESSES_FILE/);
    const unset = () =>
      loadSandboxConfig({
        BUSINESSES_FILE: file,
        SHOP_A_WEBHOOK_SECRET: 'shop-a-webhook-secret-0123456789',
      });
    expect(unset).toThrow(ConfigError);
    expect(unset).toThrow(/shop-a.*paymentAccessToken|paymentAccessToken.*shop-a/);
  });
});
