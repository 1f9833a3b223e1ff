import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, EXAMPLE_SECRETS, loadConfig, loadSandboxConfig } from '../../src/config.ts';
import { SETTINGS, type Setting, type SettingName } from '../../src/settings.ts';

type Env = Record<string, string | undefined>;

const SECRET = 'a-very-long-hs256-secret-of-at-least-32-bytes';

/** Both upstreams with every credential, and a JWT secret: a complete production setting. */
function fullEnv(extra: Env = {}): Env {
  return {
    PAYMENT_API_URL: 'https://pay.example.com',
    PAYMENT_ACCESS_TOKEN: 'pay-token-xyz',
    KYC_API_URL: 'https://kyc.example.com',
    KYC_SECRET_KEY: 'kyc-secret-xyz',
    KYC_PUBLIC_KEY: 'kyc-public-xyz',
    KYC_BUSINESS_SLUG: 'acme-shop',
    KYC_SDK_SCRIPT_URL: 'https://kyc.example.com/sdk.js',
    AUTH_JWT_SECRET: SECRET,
    ...extra,
  };
}

function without(env: Env, ...names: string[]): Env {
  const copy = { ...env };
  for (const name of names) delete copy[name];
  return copy;
}

/** The ConfigError that loading `env` throws (fails the test when none is thrown). */
function configError(env: Env): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected loadConfig to throw a ConfigError');
}

describe('loadConfig: defaults', () => {
  it('starts in sandbox mode with the documented defaults on an empty environment', () => {
    const config = loadConfig({});
    expect(config.sandbox).toBe(true);
    expect(config.port).toBe(4000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.upstream.timeoutMs).toBe(5000);
    expect(config.upstreamTimeZone).toBe('UTC');
    expect(config.auth).toBeUndefined();
    expect(config.payment).toBeUndefined();
    expect(config.kyc).toBeUndefined();
    expect(config.production).toBe(false);
    expect(config.kycPage).toBe(true);
    expect(config.graphiql).toBe(true);
    expect(config.maxBatchSize).toBe(100);
    expect(config.sandboxCredentials).toEqual({});
  });

  it('uses the cache defaults (24 h final, 5 s pending, 60 s KYC, in memory)', () => {
    const { cache } = loadConfig({});
    expect(cache.url).toBeUndefined();
    expect(cache.ttlFinalSeconds).toBe(86_400);
    expect(cache.ttlPendingSeconds).toBe(5);
    expect(cache.ttlKycSeconds).toBe(60);
    expect(cache.maxEntries).toBe(10_000);
    expect(cache.maxBytes).toBe(4 * 1024 * 1024);
  });

  it('treats empty and blank values as unset', () => {
    const config = loadConfig({ PORT: '', HOST: '  ', PAYMENT_API_URL: ' ', KYC_API_URL: '' });
    expect(config.sandbox).toBe(true);
    expect(config.port).toBe(4000);
    expect(config.host).toBe('127.0.0.1');
  });

  it('passes given credentials to the in-process sandbox', () => {
    const config = loadConfig({ PAYMENT_ACCESS_TOKEN: 'tok', KYC_BUSINESS_SLUG: 'biz' });
    expect(config.sandbox).toBe(true);
    expect(config.sandboxCredentials).toEqual({
      paymentAccessToken: 'tok',
      kycBusinessSlug: 'biz',
    });
  });
});

describe('loadConfig: upstreams', () => {
  it('reads a complete production setting', () => {
    const config = loadConfig(fullEnv());
    expect(config.sandbox).toBe(false);
    expect(config.payment).toEqual({
      baseUrl: 'https://pay.example.com',
      accessToken: 'pay-token-xyz',
    });
    expect(config.kyc).toEqual({
      baseUrl: 'https://kyc.example.com',
      secretKey: 'kyc-secret-xyz',
      publicKey: 'kyc-public-xyz',
      businessSlug: 'acme-shop',
      sdkScriptUrl: 'https://kyc.example.com/sdk.js',
    });
    expect(config.auth).toEqual({ mode: 'jwt', jwtSecret: SECRET });
    expect(config.kycPage).toBe(false);
  });

  it('refuses PAYMENT_API_URL alone, naming KYC_API_URL', () => {
    const error = configError({ PAYMENT_API_URL: 'https://pay.example.com' });
    expect(error.variable).toBe('KYC_API_URL');
    expect(error.message).toContain('KYC_API_URL');
  });

  it('refuses KYC_API_URL alone, naming PAYMENT_API_URL', () => {
    const error = configError({ KYC_API_URL: 'https://kyc.example.com' });
    expect(error.variable).toBe('PAYMENT_API_URL');
    expect(error.message).toContain('PAYMENT_API_URL');
  });

  it('refuses both URLs without PAYMENT_ACCESS_TOKEN, naming it', () => {
    const error = configError(without(fullEnv(), 'PAYMENT_ACCESS_TOKEN'));
    expect(error.variable).toBe('PAYMENT_ACCESS_TOKEN');
    expect(error.message).toContain('PAYMENT_ACCESS_TOKEN');
  });

  it.each(['KYC_SECRET_KEY', 'KYC_PUBLIC_KEY', 'KYC_BUSINESS_SLUG', 'KYC_SDK_SCRIPT_URL'])(
    'refuses both URLs without %s, naming it',
    (name) => {
      const error = configError(without(fullEnv(), name));
      expect(error.variable).toBe(name);
      expect(error.message).toContain(name);
    },
  );

  it('drops a trailing slash and keeps a path prefix', () => {
    const config = loadConfig(
      fullEnv({ PAYMENT_API_URL: 'http://h/prefix/', KYC_API_URL: 'https://k.example/' }),
    );
    expect(config.payment?.baseUrl).toBe('http://h/prefix');
    expect(config.kyc?.baseUrl).toBe('https://k.example');
  });

  it('keeps a path prefix without a trailing slash as it is', () => {
    const config = loadConfig(fullEnv({ PAYMENT_API_URL: 'https://pay.example.com/api/v1' }));
    expect(config.payment?.baseUrl).toBe('https://pay.example.com/api/v1');
  });

  it('refuses PAYMENT_API_URL=not-a-url, naming it', () => {
    const error = configError(fullEnv({ PAYMENT_API_URL: 'not-a-url' }));
    expect(error.variable).toBe('PAYMENT_API_URL');
    expect(error.message).toContain('PAYMENT_API_URL');
  });

  it('refuses an upstream URL that is not http or https', () => {
    const error = configError(fullEnv({ KYC_API_URL: 'ftp://kyc.example.com' }));
    expect(error.variable).toBe('KYC_API_URL');
  });

  it('refuses an upstream URL with a query string', () => {
    const error = configError(fullEnv({ PAYMENT_API_URL: 'https://pay.example.com/?x=1' }));
    expect(error.variable).toBe('PAYMENT_API_URL');
  });

  it('refuses a business slug with unsafe characters', () => {
    const error = configError(fullEnv({ KYC_BUSINESS_SLUG: 'acme/../x' }));
    expect(error.variable).toBe('KYC_BUSINESS_SLUG');
  });
});

describe('loadConfig: auth', () => {
  it('refuses production without any AUTH_* setting, naming AUTH_JWT_SECRET', () => {
    const error = configError(without(fullEnv(), 'AUTH_JWT_SECRET'));
    expect(error.variable).toBe('AUTH_JWT_SECRET');
    expect(error.message).toContain('AUTH_JWT_SECRET');
  });

  it('accepts AUTH_DISABLED=true', () => {
    const config = loadConfig(without(fullEnv({ AUTH_DISABLED: 'true' }), 'AUTH_JWT_SECRET'));
    expect(config.auth).toEqual({ mode: 'disabled' });
  });

  it('refuses AUTH_DISABLED with a value that is not a boolean', () => {
    const error = configError({ AUTH_DISABLED: 'maybe' });
    expect(error.variable).toBe('AUTH_DISABLED');
  });

  it('accepts AUTH_JWKS_URL instead of a secret, with issuer and audience', () => {
    const config = loadConfig(
      without(
        fullEnv({
          AUTH_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
          AUTH_ISSUER: 'https://idp.example.com/',
          AUTH_AUDIENCE: 'gateway',
        }),
        'AUTH_JWT_SECRET',
      ),
    );
    expect(config.auth).toEqual({
      mode: 'jwt',
      jwksUrl: 'https://idp.example.com/.well-known/jwks.json',
      issuer: 'https://idp.example.com/',
      audience: 'gateway',
    });
  });

  it('refuses an AUTH_JWT_SECRET shorter than 32 bytes without quoting it', () => {
    const short = 'short-secret-31-bytes-long-xxxx';
    expect(Buffer.byteLength(short)).toBe(31);
    const error = configError(fullEnv({ AUTH_JWT_SECRET: short }));
    expect(error.variable).toBe('AUTH_JWT_SECRET');
    expect(error.message).toContain('AUTH_JWT_SECRET');
    expect(error.message).not.toContain(short);
  });

  it('refuses a short AUTH_JWT_SECRET in sandbox mode too', () => {
    const error = configError({ AUTH_JWT_SECRET: 'tiny-pw' });
    expect(error.variable).toBe('AUTH_JWT_SECRET');
    expect(error.message).not.toContain('tiny-pw');
  });

  it('accepts an AUTH_JWT_SECRET of exactly 32 bytes', () => {
    const secret = 'x'.repeat(32);
    expect(loadConfig({ AUTH_JWT_SECRET: secret }).auth).toEqual({
      mode: 'jwt',
      jwtSecret: secret,
    });
  });
});

describe('loadConfig: numbers, zone and cache', () => {
  it('refuses PORT=abc with a ConfigError whose variable is PORT', () => {
    const error = configError({ PORT: 'abc' });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ConfigError');
    expect(error.variable).toBe('PORT');
    expect(error.message).toContain('PORT');
  });

  it('refuses a port out of range or with a fraction', () => {
    expect(configError({ PORT: '65536' }).variable).toBe('PORT');
    expect(configError({ PORT: '80.5' }).variable).toBe('PORT');
  });

  it('reads PORT and HOST', () => {
    const config = loadConfig({ PORT: '8080', HOST: '0.0.0.0' });
    expect(config.port).toBe(8080);
    expect(config.host).toBe('0.0.0.0');
  });

  it('refuses UPSTREAM_TIMEOUT_MS=-5', () => {
    const error = configError({ UPSTREAM_TIMEOUT_MS: '-5' });
    expect(error.variable).toBe('UPSTREAM_TIMEOUT_MS');
    expect(error.message).toContain('UPSTREAM_TIMEOUT_MS');
  });

  it('refuses a non-numeric UPSTREAM_TIMEOUT_MS', () => {
    expect(configError({ UPSTREAM_TIMEOUT_MS: '5s' }).variable).toBe('UPSTREAM_TIMEOUT_MS');
  });

  it('reads UPSTREAM_TIMEOUT_MS', () => {
    expect(loadConfig({ UPSTREAM_TIMEOUT_MS: '1500' }).upstream.timeoutMs).toBe(1500);
  });

  it('reads a valid UPSTREAM_TIME_ZONE', () => {
    expect(loadConfig({ UPSTREAM_TIME_ZONE: 'Africa/Lagos' }).upstreamTimeZone).toBe(
      'Africa/Lagos',
    );
  });

  it('refuses UPSTREAM_TIME_ZONE=Mars/Base', () => {
    const error = configError({ UPSTREAM_TIME_ZONE: 'Mars/Base' });
    expect(error.variable).toBe('UPSTREAM_TIME_ZONE');
    expect(error.message).toContain('UPSTREAM_TIME_ZONE');
  });

  it('refuses CACHE_URL=http://x (it must be redis)', () => {
    const error = configError({ CACHE_URL: 'http://x' });
    expect(error.variable).toBe('CACHE_URL');
    expect(error.message).toContain('redis');
  });

  it('does not quote an unparsable CACHE_URL, which may hold a password', () => {
    const error = configError({ CACHE_URL: 'redis//user:p4ssw0rd-value@host' });
    expect(error.variable).toBe('CACHE_URL');
    expect(error.message).not.toContain('p4ssw0rd-value');
  });

  it('accepts redis:// and rediss:// cache URLs', () => {
    expect(loadConfig({ CACHE_URL: 'redis://cache.internal:6379' }).cache.url).toBe(
      'redis://cache.internal:6379',
    );
    expect(loadConfig({ CACHE_URL: 'rediss://cache.internal:6380/0' }).cache.url).toBe(
      'rediss://cache.internal:6380/0',
    );
  });

  it('reads the cache TTL settings', () => {
    const { cache } = loadConfig({
      CACHE_TTL_FINAL_SECONDS: '3600',
      CACHE_TTL_PENDING_SECONDS: '2',
      CACHE_TTL_KYC_SECONDS: '30',
      CACHE_MAX_ENTRIES: '1000',
      CACHE_MAX_BYTES: '1048576',
      CACHE_STALE_SECONDS: '120',
    });
    expect(cache).toEqual({
      ttlFinalSeconds: 3600,
      ttlPendingSeconds: 2,
      ttlKycSeconds: 30,
      ttlNotFoundSeconds: 5,
      maxEntries: 1000,
      maxBytes: 1_048_576,
      freeze: true,
      staleSeconds: 120,
      connectTimeoutMs: 2000,
      commandTimeoutMs: 250,
      keyPrefix: 'gw',
    });
  });

  it('reads the Redis settings, and names a bad one', () => {
    const { cache, live } = loadConfig({
      CACHE_CONNECT_TIMEOUT_MS: '500',
      CACHE_COMMAND_TIMEOUT_MS: '100',
      CACHE_KEY_PREFIX: 'payments:prod',
      LIVE_HEARTBEAT_MS: '250',
    });
    expect(cache).toMatchObject({
      connectTimeoutMs: 500,
      commandTimeoutMs: 100,
      keyPrefix: 'payments:prod',
    });
    expect(live.heartbeatMs).toBe(250);
    expect(loadConfig({}).live.heartbeatMs).toBe(1000);
    expect(configError({ CACHE_COMMAND_TIMEOUT_MS: 'fast' }).variable).toBe(
      'CACHE_COMMAND_TIMEOUT_MS',
    );
    expect(configError({ CACHE_CONNECT_TIMEOUT_MS: '0' }).variable).toBe(
      'CACHE_CONNECT_TIMEOUT_MS',
    );
    expect(configError({ CACHE_KEY_PREFIX: 'a b' }).variable).toBe('CACHE_KEY_PREFIX');
    expect(configError({ LIVE_HEARTBEAT_MS: '10' }).variable).toBe('LIVE_HEARTBEAT_MS');
  });

  it('accepts a TTL of 0 and refuses a negative one', () => {
    expect(loadConfig({ CACHE_TTL_PENDING_SECONDS: '0' }).cache.ttlPendingSeconds).toBe(0);
    expect(configError({ CACHE_TTL_KYC_SECONDS: '-1' }).variable).toBe('CACHE_TTL_KYC_SECONDS');
    expect(configError({ CACHE_TTL_FINAL_SECONDS: 'day' }).variable).toBe(
      'CACHE_TTL_FINAL_SECONDS',
    );
  });

  it('freezes cached records except in production, unless told', () => {
    expect(loadConfig(fullEnv()).cache.freeze).toBe(true);
    expect(loadConfig(fullEnv({ NODE_ENV: 'production' })).cache.freeze).toBe(false);
    expect(
      loadConfig(fullEnv({ NODE_ENV: 'production', CACHE_FREEZE_RECORDS: 'true' })).cache.freeze,
    ).toBe(true);
    expect(loadConfig(fullEnv({ CACHE_FREEZE_RECORDS: 'false' })).cache.freeze).toBe(false);
    expect(configError({ CACHE_FREEZE_RECORDS: 'sometimes' }).variable).toBe(
      'CACHE_FREEZE_RECORDS',
    );
  });

  it('caps calls in flight per upstream at its connections unless told otherwise', () => {
    expect(loadConfig(fullEnv()).upstream.maxConcurrent).toBe(64);
    expect(loadConfig(fullEnv({ UPSTREAM_MAX_CONNECTIONS: '20' })).upstream.maxConcurrent).toBe(20);
    const both = loadConfig(
      fullEnv({ UPSTREAM_MAX_CONNECTIONS: '20', UPSTREAM_MAX_CONCURRENT: '5' }),
    );
    expect(both.upstream).toMatchObject({ maxConnections: 20, maxConcurrent: 5 });
    expect(configError({ UPSTREAM_MAX_CONCURRENT: '0' }).variable).toBe('UPSTREAM_MAX_CONCURRENT');
  });

  it('turns GraphiQL off in production by default', () => {
    expect(loadConfig(fullEnv({ NODE_ENV: 'production' })).graphiql).toBe(false);
    expect(loadConfig(fullEnv({ NODE_ENV: 'production', GRAPHIQL: 'true' })).graphiql).toBe(true);
  });
});

describe('loadConfig: BENCH_FEATURES_OFF (benchmark only)', () => {
  it('turns nothing off when unset', () => {
    const config = loadConfig(fullEnv());
    expect(config.upstream.benchNoBreakerOrBulkhead).toBeUndefined();
    expect(config.cache.benchNoWrite).toBeUndefined();
    expect(config.cache.benchNoSingleFlight).toBeUndefined();
    expect(config.callerShare.benchOff).toBeUndefined();
    expect(config.benchNoMetrics).toBeUndefined();
  });

  it('turns the listed features off outside production', () => {
    const config = loadConfig(
      fullEnv({ BENCH_FEATURES_OFF: 'breaker, cache-write,single-flight,caller-share,METRICS' }),
    );
    expect(config.upstream.benchNoBreakerOrBulkhead).toBe(true);
    expect(config.cache.benchNoWrite).toBe(true);
    expect(config.cache.benchNoSingleFlight).toBe(true);
    expect(config.callerShare.benchOff).toBe(true);
    expect(config.benchNoMetrics).toBe(true);
    const one = loadConfig(fullEnv({ BENCH_FEATURES_OFF: 'metrics' }));
    expect(one.benchNoMetrics).toBe(true);
    expect(one.cache.benchNoWrite).toBeUndefined();
  });

  it.each([{ NODE_ENV: 'production' }, { GATEWAY_PRODUCTION: 'true' }])(
    'is refused in production, naming BENCH_FEATURES_OFF (%o)',
    (extra) => {
      for (const features of ['metrics', 'breaker,cache-write']) {
        const error = configError(fullEnv({ BENCH_FEATURES_OFF: features, ...extra }));
        expect(error.variable).toBe('BENCH_FEATURES_OFF');
        expect(error.message).toMatch(/^BENCH_FEATURES_OFF: must not be set in production/);
      }
      // Empty is unset: production starts.
      expect(loadConfig(fullEnv({ BENCH_FEATURES_OFF: '', ...extra })).production).toBe(true);
    },
  );

  it('refuses a name it does not know, listing the known ones', () => {
    const error = configError(fullEnv({ BENCH_FEATURES_OFF: 'metrics,auth' }));
    expect(error.variable).toBe('BENCH_FEATURES_OFF');
    expect(error.message).toContain('breaker, cache-write, single-flight, caller-share, metrics');
  });
});

describe('loadConfig: sandbox and production', () => {
  const production = (extra: Env = {}): Env => fullEnv({ NODE_ENV: 'production', ...extra });
  const noUpstreams = (env: Env): Env =>
    without(
      env,
      'PAYMENT_API_URL',
      'PAYMENT_ACCESS_TOKEN',
      'KYC_API_URL',
      'KYC_SECRET_KEY',
      'KYC_PUBLIC_KEY',
      'KYC_BUSINESS_SLUG',
      'KYC_SDK_SCRIPT_URL',
    );

  it.each([
    { NODE_ENV: 'production' },
    { GATEWAY_PRODUCTION: 'true' },
    { NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET },
    { NODE_ENV: 'production', SANDBOX: 'false' },
  ])('refuses production without API URLs, naming PAYMENT_API_URL (%o)', (env) => {
    const error = configError(env);
    expect(error.variable).toBe('PAYMENT_API_URL');
    expect(error.message).toMatch(/^PAYMENT_API_URL: .*production/);
    expect(error.message).toContain('SANDBOX=true');
    expect(error.message).not.toContain('\n');
  });

  it('starts the sandbox in production only with SANDBOX=true, and then with its own auth', () => {
    const config = loadConfig({ NODE_ENV: 'production', SANDBOX: 'true', AUTH_JWT_SECRET: SECRET });
    expect(config.production).toBe(true);
    expect(config.sandbox).toBe(true);
    expect(config.auth).toEqual({ mode: 'jwt', jwtSecret: SECRET });
    const jwks = loadConfig({
      NODE_ENV: 'production',
      SANDBOX: 'true',
      AUTH_JWKS_URL: 'https://idp.example.com/jwks.json',
    });
    expect(jwks.auth).toEqual({ mode: 'jwt', jwksUrl: 'https://idp.example.com/jwks.json' });
  });

  it('refuses a production sandbox without an auth setting: no token is made for it', () => {
    const error = configError({ NODE_ENV: 'production', SANDBOX: 'true' });
    expect(error.variable).toBe('AUTH_JWT_SECRET');
  });

  it('keeps the sandbox without auth settings outside production (main.ts makes a secret)', () => {
    for (const env of [{}, { SANDBOX: 'true' }, { NODE_ENV: 'development' }]) {
      const config = loadConfig(env);
      expect(config.sandbox).toBe(true);
      expect(config.auth).toBeUndefined();
    }
  });

  it('refuses SANDBOX=false without API URLs outside production, naming PAYMENT_API_URL', () => {
    expect(configError({ SANDBOX: 'false' }).variable).toBe('PAYMENT_API_URL');
  });

  it.each([{}, { NODE_ENV: 'production' }])(
    'refuses SANDBOX=true together with API URLs, naming SANDBOX (%o)',
    (extra) => {
      const error = configError(fullEnv({ SANDBOX: 'true', ...extra }));
      expect(error.variable).toBe('SANDBOX');
      expect(error.message).toMatch(/^SANDBOX: /);
      expect(configError({ SANDBOX: 'true', KYC_API_URL: 'https://k.example' }).variable).toBe(
        'SANDBOX',
      );
    },
  );

  it('reads SANDBOX=false with API URLs as the real upstreams, and refuses a non-boolean', () => {
    expect(loadConfig(production({ SANDBOX: 'false' })).sandbox).toBe(false);
    expect(configError({ SANDBOX: 'maybe' }).variable).toBe('SANDBOX');
  });

  it('refuses AUTH_DISABLED=true in production, even next to a secret', () => {
    for (const env of [
      production({ AUTH_DISABLED: 'true' }),
      without(production({ AUTH_DISABLED: 'true' }), 'AUTH_JWT_SECRET'),
      noUpstreams(production({ SANDBOX: 'true', AUTH_DISABLED: 'true' })),
    ]) {
      const error = configError(env);
      expect(error.variable).toBe('AUTH_DISABLED');
      expect(error.message).toMatch(/^AUTH_DISABLED: .*production/);
    }
    expect(loadConfig(production({ AUTH_DISABLED: 'false' })).auth?.mode).toBe('jwt');
  });

  const httpVariables = [
    ['PAYMENT_API_URL', 'http://payments.example.com'],
    ['KYC_API_URL', 'http://kyc.example.com/api'],
    ['KYC_SDK_SCRIPT_URL', 'http://cdn.example.com/kyc.js'],
    ['AUTH_JWKS_URL', 'http://idp.example.com/jwks.json'],
  ] as const;

  it.each(httpVariables)(
    'refuses plain http to another machine in production, naming %s',
    (name, value) => {
      const error = configError(production({ [name]: value }));
      expect(error.variable).toBe(name);
      expect(error.message).toMatch(new RegExp(`^${name}: must use https in production`));
      expect(error.message).toContain('ALLOW_INSECURE_HTTP');
    },
  );

  it.each(httpVariables)(
    'accepts plain http for %s with ALLOW_INSECURE_HTTP=true',
    (name, value) => {
      const config = loadConfig(production({ [name]: value, ALLOW_INSECURE_HTTP: 'true' }));
      expect(config.production).toBe(true);
      expect(JSON.stringify(config)).toContain(value);
    },
  );

  it.each(httpVariables)('accepts plain http for %s outside production', (name, value) => {
    expect(JSON.stringify(loadConfig(fullEnv({ [name]: value })))).toContain(value);
  });

  it.each([
    'http://127.0.0.1:4010',
    'http://127.1.2.3/prefix',
    'http://127.1:8080',
    'http://localhost:4010',
    'http://LOCALHOST',
    'http://[::1]:4010',
    'http://0x7f.1',
    'http://[0:0:0:0:0:0:0:1]',
  ])('accepts plain http to the loopback address %s in production', (value) => {
    const config = loadConfig(
      production({ PAYMENT_API_URL: value, KYC_API_URL: value, KYC_SDK_SCRIPT_URL: value }),
    );
    expect(config.payment?.baseUrl.startsWith('http://')).toBe(true);
    expect(config.kyc?.sdkScriptUrl.startsWith('http://')).toBe(true);
  });

  it.each([
    'http://127.0.0.1.example.com',
    'http://localhost.example.com',
    'http://127.0.0.1@payments.example.com',
    'http://0.0.0.0:4010',
    'http://10.0.0.5',
    'http://[::2]',
    'http://128.0.0.1',
  ])('refuses %s in production: not a loopback address', (value) => {
    expect(configError(production({ PAYMENT_API_URL: value })).variable).toBe('PAYMENT_API_URL');
  });

  it('refuses ALLOW_INSECURE_HTTP with a value that is not a boolean', () => {
    expect(configError(production({ ALLOW_INSECURE_HTTP: 'sure' })).variable).toBe(
      'ALLOW_INSECURE_HTTP',
    );
  });
});

describe('loadConfig: cache encryption', () => {
  const key = (fill: number) => Buffer.alloc(32, fill);
  const KEY = key(1).toString('base64');
  const OLD_A = key(2).toString('base64url');
  const OLD_B = key(3).toString('base64');

  it('stores in clear without CACHE_ENCRYPTION_KEY', () => {
    expect(loadConfig({}).cache.encryption).toBeUndefined();
  });

  it('reads a 32-byte key in base64 (padded or URL-safe) and the old keys for reading', () => {
    expect(KEY).toHaveLength(44);
    expect(OLD_A).toHaveLength(43);
    const { encryption } = loadConfig({
      CACHE_ENCRYPTION_KEY: KEY,
      CACHE_ENCRYPTION_OLD_KEYS: ` ${OLD_A} ,${OLD_B}`,
    }).cache;
    expect(encryption?.key.equals(key(1))).toBe(true);
    expect(encryption?.oldKeys.map((old) => old.toString('hex'))).toEqual([
      key(2).toString('hex'),
      key(3).toString('hex'),
    ]);
    expect(loadConfig({ CACHE_ENCRYPTION_KEY: OLD_A }).cache.encryption?.oldKeys).toEqual([]);
  });

  it.each([
    ['16 bytes', Buffer.alloc(16, 7).toString('base64')],
    ['33 bytes', Buffer.alloc(33, 7).toString('base64')],
    ['not base64', `${'z'.repeat(40)}!@#$`],
    ['hex of 32 bytes', Buffer.alloc(32, 7).toString('hex')],
    ['a passphrase', 'correct horse battery staple, my cache key'],
  ])('refuses a CACHE_ENCRYPTION_KEY of %s, naming it without its value', (_, value) => {
    const error = configError({ CACHE_ENCRYPTION_KEY: value });
    expect(error.variable).toBe('CACHE_ENCRYPTION_KEY');
    expect(error.message).toMatch(/^CACHE_ENCRYPTION_KEY: must be 32 bytes in base64/);
    expect(error.message).not.toContain(value);
  });

  it('refuses a bad entry of CACHE_ENCRYPTION_OLD_KEYS without quoting any key', () => {
    const bad = Buffer.alloc(24, 9).toString('base64');
    const error = configError({
      CACHE_ENCRYPTION_KEY: KEY,
      CACHE_ENCRYPTION_OLD_KEYS: `${OLD_A},${bad}`,
    });
    expect(error.variable).toBe('CACHE_ENCRYPTION_OLD_KEYS');
    expect(error.message).toContain('entry 2');
    for (const secret of [KEY, OLD_A, bad]) expect(error.message).not.toContain(secret);
  });

  it('refuses CACHE_ENCRYPTION_OLD_KEYS without CACHE_ENCRYPTION_KEY', () => {
    const error = configError({ CACHE_ENCRYPTION_OLD_KEYS: OLD_A });
    expect(error.variable).toBe('CACHE_ENCRYPTION_OLD_KEYS');
    expect(error.message).not.toContain(OLD_A);
  });
});

describe('loadSandboxConfig', () => {
  it('uses its defaults on an empty environment', () => {
    expect(loadSandboxConfig({})).toEqual({
      host: '127.0.0.1',
      paymentPort: 4010,
      kycPort: 4020,
      slowMs: 10_000,
    });
  });

  it('reads ports, host, the slow delay and the credentials to expect', () => {
    expect(
      loadSandboxConfig({
        HOST: '0.0.0.0',
        SANDBOX_SLOW_MS: '250',
        SANDBOX_PAYMENT_PORT: '5010',
        SANDBOX_KYC_PORT: '5020',
        PAYMENT_ACCESS_TOKEN: 'pt',
        KYC_SECRET_KEY: 'ks',
        KYC_PUBLIC_KEY: 'kp',
        KYC_BUSINESS_SLUG: 'biz',
      }),
    ).toEqual({
      host: '0.0.0.0',
      paymentPort: 5010,
      kycPort: 5020,
      slowMs: 250,
      paymentAccessToken: 'pt',
      kycSecretKey: 'ks',
      kycPublicKey: 'kp',
      kycBusinessSlug: 'biz',
    });
  });

  it('refuses a bad port, naming it', () => {
    expect(() => loadSandboxConfig({ SANDBOX_KYC_PORT: 'x' })).toThrow(ConfigError);
    try {
      loadSandboxConfig({ SANDBOX_PAYMENT_PORT: '70000' });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).variable).toBe('SANDBOX_PAYMENT_PORT');
    }
  });
});

describe('loadConfig: placeholders of the example settings', () => {
  /** `NAME=value` lines of the repository's example settings, for the secret settings. */
  const exampleSecrets = (): [string, string][] => {
    const text = readFileSync(new URL('../../deploy/gateway.env.example', import.meta.url), 'utf8');
    const pairs: [string, string][] = [];
    for (const line of text.split('\n')) {
      const match = /^([A-Z0-9_]+)=(.+)$/.exec(line.trim());
      const name = match?.[1];
      const value = match?.[2];
      const setting: Setting<unknown> | undefined = SETTINGS[name as SettingName];
      if (name && value && setting?.secret) pairs.push([name, value]);
    }
    return pairs;
  };

  it('finds the secrets of the example settings', () => {
    expect(exampleSecrets().map(([name]) => name)).toEqual(
      expect.arrayContaining(['PAYMENT_ACCESS_TOKEN', 'KYC_SECRET_KEY', 'AUTH_JWT_SECRET']),
    );
  });

  it.each(exampleSecrets())(
    'production refuses %s as the example gives it, naming it',
    (name, value) => {
      expect(EXAMPLE_SECRETS.has(value)).toBe(true);
      const error = configError(fullEnv({ NODE_ENV: 'production', [name]: value }));
      expect(error.variable).toBe(name);
      expect(error.message).toContain('placeholder');
      expect(error.message).not.toContain(value);
      // Outside production the same value is accepted (local trials with the example file).
      expect(() => loadConfig(fullEnv({ [name]: value }))).not.toThrow();
    },
  );

  it.each([
    ['AUTH_JWT_SECRET', 'CHANGE_ME-please-to-something-at-least-32-bytes'],
    ['WEBHOOK_SECRET', 'replace-me-with-a-real-one'],
    ['WEBHOOK_OLD_SECRETS', 'an-old-secret-that-was-real,change-me-xxxxxxxxxxx'],
    ['PAYMENT_ACCESS_TOKEN', '<your token>'],
  ])('production refuses %s holding a value that says to change it', (name, value) => {
    const env = fullEnv({
      NODE_ENV: 'production',
      ...(name === 'WEBHOOK_OLD_SECRETS' && { WEBHOOK_SECRET: 'a-real-webhook-secret-1234' }),
      [name]: value,
    });
    expect(configError(env).variable).toBe(name);
  });
});
