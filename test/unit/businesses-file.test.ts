/**
 * `BUSINESSES_FILE` as the settings read it: values inline or from the environment, and every
 * refusal naming the file, the business and the field, never a value (each message is checked
 * against every secret of the file and of the environment); the single-business settings and
 * `AUTH_DISABLED` refused beside it; the business claim's name.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { readBusinessesFile } from '../../src/businesses/accounts.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import {
  type BusinessEntry,
  businessesFolder,
  writeBusinessesFile,
} from '../helpers/businesses.ts';

const folder = businessesFolder();
afterAll(() => folder.remove());

/** Values no message may show: every one ends with `-SECRETVALUE`. */
const SECRET = /SECRETVALUE/;

function entry(id: string, extra: BusinessEntry = {}): BusinessEntry {
  return {
    id,
    paymentAccessToken: `pay-${id}-SECRETVALUE`,
    kycSecretKey: `kyc-${id}-SECRETVALUE`,
    kycPublicKey: `pk-${id}-SECRETVALUE`,
    kycBusinessSlug: `${id}-slug`,
    webhookSecret: `whsec-${id}-0123456789-SECRETVALUE`,
    ...extra,
  };
}

let files = 0;
/** Writes `content` (JSON of the entries, or text as is) to a new file; returns its path. */
function fileOf(content: readonly BusinessEntry[] | string): string {
  files += 1;
  const path = folder.path(`businesses-${files}.json`);
  if (typeof content === 'string') writeFileSync(path, content);
  else writeBusinessesFile(path, content);
  return path;
}

/** The ConfigError `read` throws; fails the test when none, or when it shows a value. */
function refusal(read: () => unknown): ConfigError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).not.toMatch(SECRET);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

const ENV = { SHOP_B_TOKEN: 'env-pay-b-SECRETVALUE', SHOP_B_KYC: 'env-kyc-b-SECRETVALUE' };

describe('readBusinessesFile', () => {
  it('reads each value inline or from the variable it names', () => {
    const file = fileOf([
      entry('shop-a'),
      entry('shop_B2', {
        paymentAccessToken: { env: 'SHOP_B_TOKEN' },
        kycSecretKey: { env: 'SHOP_B_KYC' },
        webhookSecret: '',
      }),
    ]);
    expect(readBusinessesFile(file, ENV)).toEqual([
      {
        id: 'shop-a',
        paymentAccessToken: 'pay-shop-a-SECRETVALUE',
        kycSecretKey: 'kyc-shop-a-SECRETVALUE',
        kycPublicKey: 'pk-shop-a-SECRETVALUE',
        kycBusinessSlug: 'shop-a-slug',
        webhookSecrets: ['whsec-shop-a-0123456789-SECRETVALUE'],
      },
      {
        id: 'shop_B2',
        paymentAccessToken: 'env-pay-b-SECRETVALUE',
        kycSecretKey: 'env-kyc-b-SECRETVALUE',
        kycPublicKey: 'pk-shop_B2-SECRETVALUE',
        kycBusinessSlug: 'shop_B2-slug',
        // No webhook secret: its webhook paths answer 404.
        webhookSecrets: [],
      },
    ]);
  });

  // [what, entries, business named, field named, further text]
  const CASES: Array<[string, BusinessEntry[], string, string, RegExp?]> = [
    [
      'a variable that is not set',
      [entry('shop-a'), entry('shop-b', { kycSecretKey: { env: 'SHOP_B_MISSING' } })],
      'business "shop-b"',
      'kycSecretKey',
      /SHOP_B_MISSING/,
    ],
    [
      'a duplicate id',
      [
        entry('shop-a'),
        entry('shop-b'),
        entry('shop-a', { paymentAccessToken: 'other-SECRETVALUE' }),
      ],
      'business "shop-a"',
      'id',
      /twice/,
    ],
    ['a bad id', [entry('shop-a'), entry('shop a/SECRETVALUE')], 'business #2', 'id'],
    ['an id too long', [entry('x'.repeat(65))], 'business #1', 'id'],
    [
      'an unknown field',
      [entry('shop-a', { paymentToken: 'typo-SECRETVALUE' })],
      'business "shop-a"',
      'paymentToken',
    ],
    [
      'a missing field',
      [{ ...entry('shop-a'), kycPublicKey: '' }],
      'business "shop-a"',
      'kycPublicKey',
      /missing/,
    ],
    [
      'a webhook secret too short',
      [entry('shop-a', { webhookSecret: 'SECRETVALUE' })],
      'business "shop-a"',
      'webhookSecret',
    ],
    [
      'a bad slug',
      [entry('shop-a', { kycBusinessSlug: 'slug with SECRETVALUE spaces' })],
      'business "shop-a"',
      'kycBusinessSlug',
    ],
    [
      'a value that is neither a string nor { "env" }',
      [entry('shop-a', { kycSecretKey: { env: 'OK_NAME', value: 'SECRETVALUE' } })],
      'business "shop-a"',
      'kycSecretKey',
    ],
    [
      'a variable name that is not one',
      [entry('shop-a', { kycSecretKey: { env: 'not a name SECRETVALUE' } })],
      'business "shop-a"',
      'kycSecretKey',
    ],
  ];

  it.each(CASES)(
    'refuses %s, naming the file, the business and the field',
    (_, entries, business, field, more) => {
      const file = fileOf(entries);
      const error = refusal(() => readBusinessesFile(file, ENV));
      expect(error.variable).toBe('BUSINESSES_FILE');
      expect(error.message).toContain(file);
      expect(error.message).toContain(business);
      expect(error.message).toContain(`field "${field}"`);
      if (more) expect(error.message).toMatch(more);
    },
  );

  it.each([
    [
      'text that is not JSON',
      '{"businesses":[{"id":"a","paymentAccessToken":"pay-SECRETVALUE"',
      /not JSON/,
    ],
    ['no businesses list', '{"shops":[]}', /businesses/],
    ['an empty list', '{"businesses":[]}', /no business/],
    ['an entry that is not an object', '{"businesses":["pay-SECRETVALUE"]}', /business #1/],
  ])('refuses %s, naming the file', (_, text, says) => {
    const file = fileOf(text);
    const error = refusal(() => readBusinessesFile(file, ENV));
    expect(error.message).toContain(file);
    expect(error.message).toMatch(says);
  });

  it('refuses a file that cannot be read, naming it', () => {
    const file = folder.path('absent.json');
    expect(refusal(() => readBusinessesFile(file, ENV)).message).toContain(file);
  });
});

describe('the settings with BUSINESSES_FILE', () => {
  const base = (file: string, extra: Record<string, string> = {}) => ({
    PAYMENT_API_URL: 'https://pay.example.com',
    KYC_API_URL: 'https://kyc.example.com',
    KYC_SDK_SCRIPT_URL: 'https://kyc.example.com/sdk.js',
    AUTH_JWT_SECRET: 'a-very-long-hs256-secret-of-at-least-32-bytes',
    BUSINESSES_FILE: file,
    ...extra,
  });

  it('serves the file’s businesses; tokens name theirs by `biz` unless AUTH_BUSINESS_CLAIM says', () => {
    const file = fileOf([entry('shop-a'), entry('shop-b')]);
    const config = loadConfig(base(file));
    expect(config.businesses?.file).toBe(file);
    expect(config.businesses?.accounts.map((account) => account.id)).toEqual(['shop-a', 'shop-b']);
    expect(config.auth).toMatchObject({ mode: 'jwt', businessClaim: 'biz' });
    expect(loadConfig(base(file, { AUTH_BUSINESS_CLAIM: 'tenant' })).auth).toMatchObject({
      businessClaim: 'tenant',
    });
  });

  it('without the file, one business from the single settings, and no business claim', () => {
    const config = loadConfig({
      ...base(''),
      BUSINESSES_FILE: undefined,
      PAYMENT_ACCESS_TOKEN: 'pay-SECRETVALUE',
      KYC_SECRET_KEY: 'kyc-SECRETVALUE',
      KYC_PUBLIC_KEY: 'pk-SECRETVALUE',
      KYC_BUSINESS_SLUG: 'acme-shop',
    });
    expect(config.businesses).toBeUndefined();
    expect(config.auth).not.toHaveProperty('businessClaim');
  });

  it.each([
    'PAYMENT_ACCESS_TOKEN',
    'KYC_SECRET_KEY',
    'KYC_PUBLIC_KEY',
    'KYC_BUSINESS_SLUG',
    'WEBHOOK_SECRET',
  ])('refuses %s set beside the file, naming it', (name) => {
    const file = fileOf([entry('shop-a')]);
    const value =
      name === 'KYC_BUSINESS_SLUG' ? 'slug-SECRETVALUE' : 'single-0123456789-SECRETVALUE';
    const error = refusal(() => loadConfig(base(file, { [name]: value })));
    expect(error.variable).toBe(name);
    expect(error.message).toContain('BUSINESSES_FILE');
  });

  it('refuses AUTH_DISABLED with the file (every request needs a token naming its business)', () => {
    const file = fileOf([entry('shop-a')]);
    const env = { ...base(file), AUTH_JWT_SECRET: undefined, AUTH_DISABLED: 'true' };
    expect(refusal(() => loadConfig(env)).variable).toBe('AUTH_DISABLED');
  });

  it('refuses a file that does not read, as at start', () => {
    const file = fileOf([entry('shop-a', { kycSecretKey: { env: 'NOT_SET_ANYWHERE' } })]);
    const error = refusal(() => loadConfig(base(file)));
    expect(error.message).toContain(file);
    expect(error.message).toContain('business "shop-a", field "kycSecretKey"');
  });

  it.each([
    ['paymentAccessToken', 'change-me'],
    ['kycSecretKey', 'replace_me'],
    ['webhookSecret', 'change-me-to-a-long-random-secret-of-32-bytes-or-more'],
  ])(
    'in production, refuses a placeholder as %s, naming the file, business and field',
    (field, placeholder) => {
      const file = fileOf([entry('shop-a'), entry('shop-b', { [field]: placeholder })]);
      const production = { GATEWAY_PRODUCTION: 'true' };
      let error: ConfigError | undefined;
      try {
        loadConfig(base(file, production));
      } catch (thrown) {
        error = thrown as ConfigError;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect(error?.message).toContain(file);
      expect(error?.message).toContain(`business "shop-b", field "${field}"`);
      expect(error?.message).not.toContain(placeholder);
      expect(error?.message).not.toMatch(SECRET);
      // Outside production, the same file is accepted (the sandbox and local work).
      expect(loadConfig(base(file)).businesses?.accounts).toHaveLength(2);
    },
  );
});
