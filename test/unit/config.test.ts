import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadSandboxConfig } from '../../src/config.ts';

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

  it('uses the cache defaults of contract §8 (24 h final, 5 s pending, 60 s KYC, in memory)', () => {
    const { cache } = loadConfig({});
    expect(cache.url).toBeUndefined();
    expect(cache.ttlFinalSeconds).toBe(86_400);
    expect(cache.ttlPendingSeconds).toBe(5);
    expect(cache.ttlKycSeconds).toBe(60);
    expect(cache.maxEntries).toBe(10_000);
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
      CACHE_STALE_SECONDS: '120',
    });
    expect(cache).toEqual({
      ttlFinalSeconds: 3600,
      ttlPendingSeconds: 2,
      ttlKycSeconds: 30,
      maxEntries: 1000,
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

  it('turns GraphiQL off in production by default', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).graphiql).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', GRAPHIQL: 'true' }).graphiql).toBe(true);
  });
});

describe('loadSandboxConfig', () => {
  it('uses its defaults on an empty environment', () => {
    expect(loadSandboxConfig({})).toEqual({
      host: '127.0.0.1',
      paymentPort: 4010,
      kycPort: 4020,
    });
  });

  it('reads ports, host and the credentials to expect', () => {
    expect(
      loadSandboxConfig({
        HOST: '0.0.0.0',
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
