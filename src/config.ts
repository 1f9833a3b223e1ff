/**
 * The only module that reads the environment, through the declared settings (settings.ts): each
 * variable is read and validated by its own schema there; the rules between variables (sandbox
 * mode, production refusals, auth) are here. A setting that is present but wrong stops the start
 * with one line naming the variable (never its value when the variable holds a credential).
 */

import { type BusinessAccount, readBusinessesFile } from './businesses/accounts.ts';
import { type BenchFeature, ConfigError, type Env, readSetting } from './settings.ts';

export { ConfigError };

/**
 * Settings of the payment interface. The credential is one business's (the single-business
 * settings); with `BUSINESSES_FILE` each business's clients take their own, and this one is empty.
 */
export interface PaymentUpstreamConfig {
  /** Base address; may carry a path prefix. Always ends without a slash. */
  baseUrl: string;
  accessToken: string;
}

/** Settings of the KYC interface and its browser widget (credentials: as for the payment's). */
export interface KycUpstreamConfig {
  baseUrl: string;
  secretKey: string;
  publicKey: string;
  businessSlug: string;
  sdkScriptUrl: string;
}

/** How the gateway checks client tokens. */
export type AuthConfig =
  | { mode: 'disabled' }
  | {
      mode: 'jwt';
      /** HS256 secret as UTF-8 bytes' source string, when set. */
      jwtSecret?: string;
      /** JWKS address for RS256/ES256 tokens, when set. */
      jwksUrl?: string;
      issuer?: string;
      audience?: string;
      /**
       * With several businesses: the claim naming the request's business (`AUTH_BUSINESS_CLAIM`).
       * Absent: one business, and tokens need no such claim.
       */
      businessClaim?: string;
    };

export interface CacheConfig {
  /** `redis://…` when the cache is shared; undefined for the in-process store. */
  url?: string;
  /** Seconds a transaction with a final status is kept. */
  ttlFinalSeconds: number;
  /** Seconds a transaction that is not final is kept. */
  ttlPendingSeconds: number;
  /** Seconds KYC details are kept. */
  ttlKycSeconds: number;
  /** Seconds an unknown reference or user is remembered (0: not at all). */
  ttlNotFoundSeconds: number;
  /** Most entries the in-process store holds (least recently used go first). */
  maxEntries: number;
  /** Most (estimated) heap bytes of records the in-process store holds. */
  maxBytes: number;
  /** Whether the in-process store freezes each record it stores (on except in production). */
  freeze: boolean;
  /**
   * Seconds a final transaction is kept past its TTL, to be served (marked stale) only when the
   * payment service is down. 0 turns stale serving off.
   */
  staleSeconds: number;
  /** Time to open a connection to Redis before giving up on that attempt (ms). */
  connectTimeoutMs: number;
  /** Longest wait for one Redis command; past it the command counts as failed (ms). */
  commandTimeoutMs: number;
  /** Prefix of every Redis key and channel, so that several deployments may share one Redis. */
  keyPrefix: string;
  /**
   * AES-256-GCM keys of the records stored in Redis (`CACHE_ENCRYPTION_KEY`): `key` encrypts
   * every write; `oldKeys` (`CACHE_ENCRYPTION_OLD_KEYS`) are still accepted for reading, so
   * that a key can be rotated without losing the cache. Absent: records are stored in clear.
   */
  encryption?: { key: Buffer; oldKeys: Buffer[] };
  /** Benchmark only (`BENCH_FEATURES_OFF=cache-write`, never in production): nothing stored. */
  benchNoWrite?: true;
  /**
   * Benchmark only (`BENCH_FEATURES_OFF=single-flight`, never in production): concurrent misses
   * of one key each call the upstream.
   */
  benchNoSingleFlight?: true;
}

/** Abuse limits: checked before execution, with no upstream call. */
export interface LimitsConfig {
  depth: number;
  aliases: number;
  directives: number;
  tokens: number;
  /** Largest GraphQL document, in bytes. */
  documentBytes: number;
  /** Largest request body, in bytes. */
  bodyBytes: number;
  /** Most root fields in one operation (fragments expanded). */
  rootFields: number;
  /** Most estimated cost; `transactions` and `_entities` count each of their references. */
  cost: number;
  /** Most fragment definitions in one document. */
  fragments: number;
  /** Memory for parsed and validated documents kept for reuse, in bytes (estimated). */
  documentCacheBytes: number;
  /** Time a client has to send a request's headers and body before its connection is closed (ms). */
  requestTimeoutMs: number;
}

export interface RateLimitConfig {
  /** Sustained requests per second per caller; 0 turns the limit off. */
  rps: number;
  /** Requests a caller may make at once above the sustained rate. */
  burst: number;
}

/** Which documents the gateway accepts (trusted documents). */
export type TrustedDocumentsMode = 'off' | 'allow' | 'only';

export interface LogConfig {
  level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Extra pino redaction paths, on top of the built-in list. */
  redactPaths: string[];
}

export interface UpstreamPolicyConfig {
  /** Total time budget of one upstream read, retries included (ms). */
  timeoutMs: number;
  /** Most attempts of one read (first call included). */
  maxAttempts: number;
  /** First backoff delay before a retry (ms); doubles per retry, with jitter. */
  retryBaseDelayMs: number;
  /** Most open connections per upstream. */
  maxConnections: number;
  /** Most calls in flight per upstream; more wait in a queue. */
  maxConcurrent: number;
  /** Most calls waiting for a slot per upstream; more are refused at once. */
  maxQueued: number;
  /** Share of failed calls over the window that opens the circuit (0 to 1). */
  breakerFailureRate: number;
  /** The window over which the failure rate is measured (ms). */
  breakerWindowMs: number;
  /** Fewest calls in a window before the rate counts. */
  breakerMinCalls: number;
  /** How long an open circuit waits before letting one probe call through (ms). */
  breakerHalfOpenMs: number;
  /** Benchmark only (`BENCH_FEATURES_OFF=breaker`, never in production): calls bypass both. */
  benchNoBreakerOrBulkhead?: true;
}

/** Signed notifications (`WEBHOOK_*`, docs/webhooks.md). */
export interface WebhookConfig {
  /**
   * The secret signatures are checked with (`WEBHOOK_SECRET`), then earlier ones (rotation).
   * Empty when `WEBHOOK_SECRET` is unset: the webhook paths answer 404.
   */
  secrets: string[];
  /** How far `t` may be from now, and how long a notification is remembered (s). */
  toleranceSeconds: number;
}

/** Everything the gateway process needs, validated. */
export interface GatewayConfig {
  host: string;
  port: number;
  production: boolean;
  /**
   * True when the gateway starts its own sandbox upstreams: `SANDBOX=true`, or neither API URL
   * set outside production.
   */
  sandbox: boolean;
  payment?: PaymentUpstreamConfig;
  kyc?: KycUpstreamConfig;
  /** Credentials the in-process sandbox should expect, when given (sandbox mode only). */
  sandboxCredentials: {
    paymentAccessToken?: string;
    kycSecretKey?: string;
    kycPublicKey?: string;
    kycBusinessSlug?: string;
  };
  /**
   * The businesses of `BUSINESSES_FILE` (read again on `SIGHUP`); absent: one business, from the
   * single-business settings (`payment`, `kyc`, `webhooks`).
   */
  businesses?: { file: string; accounts: BusinessAccount[] };
  /** Sandbox mode: how many demo businesses the simulators serve (`SANDBOX_BUSINESSES`). */
  sandboxBusinesses: number;
  /**
   * With several businesses (a file, or the sandbox's demo ones): the claim naming a token's
   * business (`AUTH_BUSINESS_CLAIM`), also when main.ts makes the sandbox's secret.
   */
  businessClaim?: string;
  /** IANA zone in which upstream times (which carry no zone) are read. */
  upstreamTimeZone: string;
  upstream: UpstreamPolicyConfig;
  cache: CacheConfig;
  /**
   * Undefined only in sandbox mode outside production when no auth setting is given: main.ts
   * then makes a random secret. Production always has its own setting.
   */
  auth?: AuthConfig;
  graphiql: boolean;
  /** Whether introspection is answered (off in production unless enabled). */
  introspection: boolean;
  /** Origins allowed by CORS; empty: no CORS headers at all. */
  corsOrigins: string[];
  /** Request headers allowed from those origins beyond the default list. */
  corsAllowedHeaders: string[];
  /** Long-lived connections, counted per caller. */
  connections: {
    /** WebSockets and graphql-sse reservations one caller may hold at once. */
    maxPerCaller: number;
    /** Time a graphql-sse reservation may stay without its stream opened (ms). */
    reservationUnusedMs: number;
    /** Sockets the process holds at once. */
    maxSockets: number;
    /** Idle sockets one remote address may hold (0: no bound). */
    maxIdleSocketsPerAddress: number;
    /** Bytes that may wait to be written to one stream. */
    streamMaxBufferedBytes: number;
    /** Time frames may wait with none of them written before the stream is ended (ms). */
    streamWriteTimeoutMs: number;
  };
  limits: LimitsConfig;
  /** Per-caller rates: end users' tokens (no scope) and service tokens (with scopes). */
  rateLimit: RateLimitConfig & { service: RateLimitConfig };
  /**
   * `off`: any document; `allow`: known documents by hash, and any other document as usual;
   * `only`: known documents only (by hash or by identical text).
   */
  trustedDocuments: TrustedDocumentsMode;
  /** Bounds of registered persisted queries (automatic persisted queries). */
  persisted: { registrationsPerMinute: number; maxBytes: number };
  /** Whether the KYC web page is served at /kyc. */
  kycPage: boolean;
  /** Most entries in `transactions(txRefs:)`. */
  maxBatchSize: number;
  /** How long `confirmPayment` keeps a payment's claim for its order (days). */
  confirmationRetentionDays: number;
  /** In production without Redis, claims in memory are accepted (else confirmPayment refuses). */
  allowMemoryClaims: boolean;
  /** Most distinct upstream records one request may read. */
  maxRecordsPerRequest: number;
  /** One caller's upstream calls in flight in this process, and waiting for a slot. */
  callerShare: {
    maxConcurrent: number;
    serviceMaxConcurrent: number;
    maxQueued: number;
    /** Benchmark only (`BENCH_FEATURES_OFF=caller-share`, never in production): no cap. */
    benchOff?: true;
  };
  /**
   * Benchmark only (`BENCH_FEATURES_OFF=metrics`, never in production): nothing is observed on
   * the request path (the registry and `/metrics` stay, with nothing counted).
   */
  benchNoMetrics?: true;
  log: LogConfig;
  /** On SIGTERM/SIGINT, how long `/readyz` answers 503 before the listener closes (ms). */
  shutdownDrainMs: number;
  /** Once the listener is closed, how long answers and streams may take to finish (ms). */
  shutdownGraceMs: number;
  /** The port of `/metrics`' own listener; undefined: `/metrics` is served on `port`. */
  metricsPort?: number;
  /** Delay of the sandbox's slow references (sandbox mode only, ms). */
  sandboxSlowMs: number;
  /** Signed notifications (no secrets when `WEBHOOK_SECRET` is unset: the paths answer 404). */
  webhooks: WebhookConfig;
  /**
   * Live status polling, in ms. `heartbeatMs`: how often the poller of a txRef
   * says it is alive (and renews its Redis lock); a poller silent for 3 beats is replaced.
   */
  live: {
    pollMs: number;
    maxPollMs: number;
    maxWatchMs: number;
    heartbeatMs: number;
    /** Live subscriptions one caller may hold at once (across replicas with Redis). */
    maxPerCaller: number;
    /** Polls of a record a notification covered wait this many times longer. */
    pushedPollFactor: number;
  };
}

/**
 * True for a host that never leaves the machine: 127.0.0.0/8, ::1, localhost. (URL has already
 * normalised the IPv4 spellings such as `127.1` or `0x7f.1`.)
 */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

type HttpUrlSetting = 'PAYMENT_API_URL' | 'KYC_API_URL' | 'KYC_SDK_SCRIPT_URL' | 'AUTH_JWKS_URL';

/**
 * An http(s) URL; plain http to another machine only when `plainHttpAllowed` (outside
 * production, or `ALLOW_INSECURE_HTTP=true`): it would carry credentials, records or a script
 * the browser runs, readable and changeable on the way.
 */
function httpUrl(env: Env, name: HttpUrlSetting, plainHttpAllowed: boolean): string | undefined {
  const value = readSetting(env, name);
  if (value === undefined || plainHttpAllowed) return value;
  const parsed = new URL(value);
  if (parsed.protocol === 'http:' && !isLoopback(parsed.hostname)) {
    throw new ConfigError(
      name,
      'must use https in production (plain http only to a loopback address, or with ALLOW_INSECURE_HTTP=true)',
    );
  }
  return value;
}

type RequiredSetting =
  | 'PAYMENT_ACCESS_TOKEN'
  | 'KYC_SECRET_KEY'
  | 'KYC_PUBLIC_KEY'
  | 'KYC_BUSINESS_SLUG'
  | 'KYC_SDK_SCRIPT_URL';

function required(value: string | undefined, name: RequiredSetting, because: string): string {
  if (value === undefined) throw new ConfigError(name, `must be set ${because}`);
  return value;
}

function cacheEncryption(env: Env): CacheConfig['encryption'] {
  const key = readSetting(env, 'CACHE_ENCRYPTION_KEY');
  const oldKeys = readSetting(env, 'CACHE_ENCRYPTION_OLD_KEYS');
  if (key === undefined) {
    if (oldKeys !== undefined) {
      throw new ConfigError('CACHE_ENCRYPTION_OLD_KEYS', 'needs CACHE_ENCRYPTION_KEY to be set');
    }
    return undefined;
  }
  return { key, oldKeys: oldKeys ?? [] };
}

/**
 * `devSecretAllowed`: sandbox mode outside production, where main.ts may make a secret for the
 * run (and print a token) when no auth setting is given.
 */
function auth(
  env: Env,
  production: boolean,
  devSecretAllowed: boolean,
  plainHttpAllowed: boolean,
): AuthConfig | undefined {
  const disabled = readSetting(env, 'AUTH_DISABLED');
  const jwtSecret = readSetting(env, 'AUTH_JWT_SECRET');
  const jwksUrl = httpUrl(env, 'AUTH_JWKS_URL', plainHttpAllowed);
  const issuer = readSetting(env, 'AUTH_ISSUER');
  const audience = readSetting(env, 'AUTH_AUDIENCE');
  if (disabled && production) {
    throw new ConfigError(
      'AUTH_DISABLED',
      'must not be true in production (every caller could read everything)',
    );
  }
  if (disabled) return { mode: 'disabled' };
  if (jwtSecret === undefined && jwksUrl === undefined) {
    if (devSecretAllowed) return undefined;
    throw new ConfigError(
      'AUTH_JWT_SECRET',
      'or AUTH_JWKS_URL must be set (or AUTH_DISABLED=true for local work only)',
    );
  }
  return {
    mode: 'jwt',
    ...(jwtSecret !== undefined && { jwtSecret }),
    ...(jwksUrl !== undefined && { jwksUrl }),
    ...(issuer !== undefined && { issuer }),
    ...(audience !== undefined && { audience }),
  };
}

/**
 * Secret values written in the repository's example settings (deploy/gateway.env.example):
 * anyone who read the repository knows them, so production refuses them whatever their length,
 * as it does any value that still says to change it. A unit test keeps this list in step with
 * the example files.
 */
export const EXAMPLE_SECRETS: ReadonlySet<string> = new Set([
  'change-me',
  'change-me-to-a-long-random-secret-of-32-bytes-or-more',
]);

/** Values that announce themselves as placeholders (`change-me`, `CHANGEME`, `replace_me`…). */
const PLACEHOLDER = /\b(change|replace)[-_ ]?me\b|^<.*>$|^(secret|password|example|placeholder)$/i;

type PlaceholderChecked =
  | 'PAYMENT_ACCESS_TOKEN'
  | 'KYC_SECRET_KEY'
  | 'AUTH_JWT_SECRET'
  | 'WEBHOOK_SECRET'
  | 'WEBHOOK_OLD_SECRETS';

/** Production: no secret setting may hold a value of the example settings (named, never shown). */
function refuseExampleSecrets(env: Env): void {
  const read: Record<PlaceholderChecked, () => (string | undefined)[]> = {
    PAYMENT_ACCESS_TOKEN: () => [readSetting(env, 'PAYMENT_ACCESS_TOKEN')],
    KYC_SECRET_KEY: () => [readSetting(env, 'KYC_SECRET_KEY')],
    AUTH_JWT_SECRET: () => [readSetting(env, 'AUTH_JWT_SECRET')],
    WEBHOOK_SECRET: () => [readSetting(env, 'WEBHOOK_SECRET')],
    WEBHOOK_OLD_SECRETS: () => readSetting(env, 'WEBHOOK_OLD_SECRETS') ?? [],
  };
  for (const [name, values] of Object.entries(read) as [PlaceholderChecked, () => string[]][]) {
    for (const value of values()) {
      if (value !== undefined && (EXAMPLE_SECRETS.has(value) || PLACEHOLDER.test(value))) {
        throw new ConfigError(
          name,
          'holds the placeholder of the example settings, which anyone who read the repository knows: set a secret of your own (e.g. from `openssl rand -base64 48`)',
        );
      }
    }
  }
}

/**
 * Whether the process runs in production (`NODE_ENV=production` or `GATEWAY_PRODUCTION`), read
 * before the other settings (what main.ts prints depends on it); a `GATEWAY_PRODUCTION` that is
 * not a flag is `loadConfig`'s to report.
 */
export function productionMode(env: Env): boolean {
  if (readSetting(env, 'NODE_ENV') === 'production') return true;
  try {
    return readSetting(env, 'GATEWAY_PRODUCTION');
  } catch {
    return false;
  }
}

/**
 * Reads and validates the gateway's settings.
 * @throws ConfigError naming the first unusable variable.
 */
export function loadConfig(env: Env): GatewayConfig {
  const production =
    readSetting(env, 'NODE_ENV') === 'production' || readSetting(env, 'GATEWAY_PRODUCTION');
  const plainHttpAllowed = !production || readSetting(env, 'ALLOW_INSECURE_HTTP');
  if (production) refuseExampleSecrets(env);
  const paymentUrl = httpUrl(env, 'PAYMENT_API_URL', plainHttpAllowed);
  const kycUrl = httpUrl(env, 'KYC_API_URL', plainHttpAllowed);
  const sandbox = paymentUrl === undefined && kycUrl === undefined;
  const sandboxSetting = readSetting(env, 'SANDBOX');
  if (sandboxSetting === true && !sandbox) {
    throw new ConfigError('SANDBOX', 'must not be true when PAYMENT_API_URL or KYC_API_URL is set');
  }
  // A payment gateway must never answer invented payments because a setting was forgotten.
  if (sandbox && sandboxSetting !== true && (production || sandboxSetting === false)) {
    throw new ConfigError(
      'PAYMENT_API_URL',
      `must be set ${production ? 'in production' : 'when SANDBOX=false'}, with KYC_API_URL (only SANDBOX=true starts the built-in sandbox, whose payments are invented)`,
    );
  }
  if (!sandbox && paymentUrl === undefined) {
    throw new ConfigError('PAYMENT_API_URL', 'must be set when KYC_API_URL is set');
  }
  if (!sandbox && kycUrl === undefined) {
    throw new ConfigError('KYC_API_URL', 'must be set when PAYMENT_API_URL is set');
  }
  const because = 'when PAYMENT_API_URL and KYC_API_URL are set';
  const credentials = upstreamCredentials(env);
  const businesses = businessesFile(env, production);
  // With a file of businesses, each business's clients take its own credentials.
  const own = (value: string | undefined, name: RequiredSetting): string =>
    businesses ? '' : required(value, name, because);
  const payment =
    paymentUrl === undefined
      ? undefined
      : {
          baseUrl: paymentUrl,
          accessToken: own(credentials.paymentAccessToken, 'PAYMENT_ACCESS_TOKEN'),
        };
  const kyc =
    kycUrl === undefined
      ? undefined
      : {
          baseUrl: kycUrl,
          secretKey: own(credentials.kycSecretKey, 'KYC_SECRET_KEY'),
          publicKey: own(credentials.kycPublicKey, 'KYC_PUBLIC_KEY'),
          businessSlug: own(credentials.kycBusinessSlug, 'KYC_BUSINESS_SLUG'),
          sdkScriptUrl: required(
            httpUrl(env, 'KYC_SDK_SCRIPT_URL', plainHttpAllowed),
            'KYC_SDK_SCRIPT_URL',
            because,
          ),
        };
  const cacheUrl = readSetting(env, 'CACHE_URL');
  const port = readSetting(env, 'PORT');
  const metricsPort = readSetting(env, 'METRICS_PORT');
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError('METRICS_PORT', `must differ from PORT (both ${port})`);
  }
  const authConfig = auth(env, production, sandbox && !production, plainHttpAllowed);
  if (businesses && authConfig?.mode === 'disabled') {
    throw new ConfigError(
      'AUTH_DISABLED',
      'must not be true with BUSINESSES_FILE (every request needs a token naming its business)',
    );
  }
  const sandboxBusinesses = readSetting(env, 'SANDBOX_BUSINESSES');
  if (sandboxBusinesses > 1 && (!sandbox || businesses)) {
    throw new ConfigError(
      'SANDBOX_BUSINESSES',
      businesses
        ? 'must not be set with BUSINESSES_FILE (the sandbox then serves the businesses of the file)'
        : 'is for sandbox mode only (no PAYMENT_API_URL / KYC_API_URL)',
    );
  }
  // Several businesses (a file, or the sandbox's demo ones): tokens name theirs.
  const businessClaim =
    businesses || sandboxBusinesses > 1 ? readSetting(env, 'AUTH_BUSINESS_CLAIM') : undefined;
  const authWithBusiness =
    authConfig?.mode === 'jwt' && businessClaim !== undefined
      ? { ...authConfig, businessClaim }
      : authConfig;
  const encryption = cacheEncryption(env);
  // The benchmark's switches, read here alone; production refuses them.
  const benchOff = readSetting(env, 'BENCH_FEATURES_OFF');
  if (production && benchOff.size > 0) {
    throw new ConfigError(
      'BENCH_FEATURES_OFF',
      'must not be set in production (it turns production guarantees off, for the benchmark only)',
    );
  }
  const off = <T extends object>(feature: BenchFeature, fields: T): T | undefined =>
    benchOff.has(feature) ? fields : undefined;
  const maxConnections = readSetting(env, 'UPSTREAM_MAX_CONNECTIONS');
  return {
    host: readSetting(env, 'HOST'),
    port,
    production,
    sandbox,
    ...(payment && { payment }),
    ...(kyc && { kyc }),
    sandboxCredentials: credentials,
    ...(businesses && { businesses }),
    sandboxBusinesses,
    ...(businessClaim !== undefined && { businessClaim }),
    upstreamTimeZone: readSetting(env, 'UPSTREAM_TIME_ZONE'),
    upstream: {
      timeoutMs: readSetting(env, 'UPSTREAM_TIMEOUT_MS'),
      maxAttempts: readSetting(env, 'UPSTREAM_MAX_ATTEMPTS'),
      retryBaseDelayMs: readSetting(env, 'UPSTREAM_RETRY_BASE_DELAY_MS'),
      maxConnections,
      // One call per connection (HTTP/1.1 without pipelining): beyond, calls would only wait in
      // the HTTP client's queue instead of the cap's.
      maxConcurrent: readSetting(env, 'UPSTREAM_MAX_CONCURRENT') ?? maxConnections,
      maxQueued: readSetting(env, 'UPSTREAM_MAX_QUEUED'),
      breakerFailureRate: readSetting(env, 'UPSTREAM_BREAKER_FAILURE_PERCENT') / 100,
      breakerWindowMs: readSetting(env, 'UPSTREAM_BREAKER_WINDOW_MS'),
      breakerMinCalls: readSetting(env, 'UPSTREAM_BREAKER_MIN_CALLS'),
      breakerHalfOpenMs: readSetting(env, 'UPSTREAM_BREAKER_HALF_OPEN_MS'),
      ...off('breaker', { benchNoBreakerOrBulkhead: true as const }),
    },
    cache: {
      ...(cacheUrl !== undefined && { url: cacheUrl }),
      ttlFinalSeconds: readSetting(env, 'CACHE_TTL_FINAL_SECONDS'),
      ttlPendingSeconds: readSetting(env, 'CACHE_TTL_PENDING_SECONDS'),
      ttlKycSeconds: readSetting(env, 'CACHE_TTL_KYC_SECONDS'),
      ttlNotFoundSeconds: readSetting(env, 'CACHE_TTL_NOT_FOUND_SECONDS'),
      maxEntries: readSetting(env, 'CACHE_MAX_ENTRIES'),
      maxBytes: readSetting(env, 'CACHE_MAX_BYTES'),
      freeze: readSetting(env, 'CACHE_FREEZE_RECORDS') ?? !production,
      staleSeconds: readSetting(env, 'CACHE_STALE_SECONDS'),
      connectTimeoutMs: readSetting(env, 'CACHE_CONNECT_TIMEOUT_MS'),
      commandTimeoutMs: readSetting(env, 'CACHE_COMMAND_TIMEOUT_MS'),
      keyPrefix: readSetting(env, 'CACHE_KEY_PREFIX'),
      ...(encryption && { encryption }),
      ...off('cache-write', { benchNoWrite: true as const }),
      ...off('single-flight', { benchNoSingleFlight: true as const }),
    },
    log: {
      level: readSetting(env, 'LOG_LEVEL'),
      redactPaths: readSetting(env, 'LOG_REDACT_PATHS'),
    },
    shutdownDrainMs: readSetting(env, 'SHUTDOWN_DRAIN_MS') ?? (production ? 5000 : 0),
    shutdownGraceMs: readSetting(env, 'SHUTDOWN_GRACE_MS'),
    ...(metricsPort !== undefined && { metricsPort }),
    sandboxSlowMs: readSetting(env, 'SANDBOX_SLOW_MS'),
    ...(authWithBusiness && { auth: authWithBusiness }),
    graphiql: readSetting(env, 'GRAPHIQL') ?? !production,
    introspection: readSetting(env, 'INTROSPECTION') ?? !production,
    corsOrigins: readSetting(env, 'CORS_ORIGINS'),
    corsAllowedHeaders: readSetting(env, 'CORS_ALLOWED_HEADERS'),
    connections: {
      maxPerCaller: readSetting(env, 'CONNECTIONS_MAX_PER_CALLER'),
      reservationUnusedMs: readSetting(env, 'SSE_RESERVATION_UNUSED_MS'),
      maxSockets: readSetting(env, 'MAX_CONNECTIONS'),
      maxIdleSocketsPerAddress: readSetting(env, 'MAX_IDLE_SOCKETS_PER_ADDRESS'),
      streamMaxBufferedBytes: readSetting(env, 'STREAM_MAX_BUFFERED_BYTES'),
      streamWriteTimeoutMs: readSetting(env, 'STREAM_WRITE_TIMEOUT_MS'),
    },
    limits: {
      depth: readSetting(env, 'LIMIT_DEPTH'),
      aliases: readSetting(env, 'LIMIT_ALIASES'),
      directives: readSetting(env, 'LIMIT_DIRECTIVES'),
      tokens: readSetting(env, 'LIMIT_TOKENS'),
      documentBytes: readSetting(env, 'LIMIT_DOCUMENT_BYTES'),
      bodyBytes: readSetting(env, 'LIMIT_BODY_BYTES'),
      rootFields: readSetting(env, 'LIMIT_ROOT_FIELDS'),
      cost: readSetting(env, 'LIMIT_COST'),
      fragments: readSetting(env, 'LIMIT_FRAGMENTS'),
      documentCacheBytes: readSetting(env, 'DOCUMENT_CACHE_BYTES'),
      requestTimeoutMs: readSetting(env, 'REQUEST_TIMEOUT_MS'),
    },
    rateLimit: {
      rps: readSetting(env, 'RATE_LIMIT_RPS'),
      burst: readSetting(env, 'RATE_LIMIT_BURST'),
      service: {
        rps: readSetting(env, 'SERVICE_RATE_LIMIT_RPS'),
        burst: readSetting(env, 'SERVICE_RATE_LIMIT_BURST'),
      },
    },
    trustedDocuments: readSetting(env, 'TRUSTED_DOCUMENTS'),
    persisted: {
      registrationsPerMinute: readSetting(env, 'PERSISTED_REGISTRATIONS_PER_MINUTE'),
      maxBytes: readSetting(env, 'PERSISTED_MAX_BYTES'),
    },
    kycPage: readSetting(env, 'KYC_PAGE') ?? sandbox,
    maxBatchSize: readSetting(env, 'MAX_BATCH_SIZE'),
    confirmationRetentionDays: readSetting(env, 'CONFIRMATION_RETENTION_DAYS'),
    allowMemoryClaims: readSetting(env, 'ALLOW_MEMORY_CLAIMS'),
    maxRecordsPerRequest: readSetting(env, 'MAX_RECORDS_PER_REQUEST'),
    callerShare: {
      maxConcurrent: readSetting(env, 'UPSTREAM_MAX_CONCURRENT_PER_CALLER'),
      serviceMaxConcurrent: readSetting(env, 'SERVICE_UPSTREAM_MAX_CONCURRENT_PER_CALLER'),
      maxQueued: readSetting(env, 'UPSTREAM_MAX_QUEUED_PER_CALLER'),
      ...off('caller-share', { benchOff: true as const }),
    },
    ...off('metrics', { benchNoMetrics: true as const }),
    live: {
      pollMs: readSetting(env, 'LIVE_POLL_MS'),
      maxPollMs: readSetting(env, 'LIVE_MAX_POLL_MS'),
      maxWatchMs: readSetting(env, 'LIVE_MAX_WATCH_SECONDS') * 1000,
      heartbeatMs: readSetting(env, 'LIVE_HEARTBEAT_MS'),
      maxPerCaller: readSetting(env, 'LIVE_MAX_PER_CALLER'),
      pushedPollFactor: readSetting(env, 'WEBHOOK_POLL_BACKOFF'),
    },
    webhooks: webhooks(env),
  };
}

/** The settings a file of businesses replaces: each business has its own. */
const SINGLE_BUSINESS_SETTINGS = [
  'PAYMENT_ACCESS_TOKEN',
  'KYC_SECRET_KEY',
  'KYC_PUBLIC_KEY',
  'KYC_BUSINESS_SLUG',
  'WEBHOOK_SECRET',
  'WEBHOOK_OLD_SECRETS',
] as const;

/**
 * `BUSINESSES_FILE`'s businesses; undefined when it is unset. With it, the single-business
 * credentials must not be set (which of two would a request use?), and in production no value
 * may be an example's placeholder.
 */
function businessesFile(
  env: Env,
  production: boolean,
): { file: string; accounts: BusinessAccount[] } | undefined {
  const file = readSetting(env, 'BUSINESSES_FILE');
  if (file === undefined) return undefined;
  for (const name of SINGLE_BUSINESS_SETTINGS) {
    if (readSetting(env, name) !== undefined) {
      throw new ConfigError(
        name,
        'must not be set with BUSINESSES_FILE (each business has its own in the file)',
      );
    }
  }
  const accounts = readBusinessesFile(file, env);
  if (production) {
    for (const account of accounts) {
      const secrets = {
        paymentAccessToken: account.paymentAccessToken,
        kycSecretKey: account.kycSecretKey,
        webhookSecret: account.webhookSecrets[0],
      };
      for (const [field, value] of Object.entries(secrets)) {
        if (value !== undefined && (EXAMPLE_SECRETS.has(value) || PLACEHOLDER.test(value))) {
          throw new ConfigError(
            'BUSINESSES_FILE',
            `${file}: business "${account.id}", field "${field}" holds a placeholder: set a secret of your own`,
          );
        }
      }
    }
  }
  return { file, accounts };
}

function webhooks(env: Env): WebhookConfig {
  const secret = readSetting(env, 'WEBHOOK_SECRET');
  const oldSecrets = readSetting(env, 'WEBHOOK_OLD_SECRETS');
  if (secret === undefined && oldSecrets !== undefined) {
    throw new ConfigError('WEBHOOK_OLD_SECRETS', 'needs WEBHOOK_SECRET to be set');
  }
  return {
    secrets: secret === undefined ? [] : [secret, ...(oldSecrets ?? [])],
    toleranceSeconds: readSetting(env, 'WEBHOOK_TOLERANCE_SECONDS'),
  };
}

/** The upstream credentials that are set (the sandbox expects these when given). */
function upstreamCredentials(env: Env): GatewayConfig['sandboxCredentials'] {
  const paymentAccessToken = readSetting(env, 'PAYMENT_ACCESS_TOKEN');
  const kycSecretKey = readSetting(env, 'KYC_SECRET_KEY');
  const kycPublicKey = readSetting(env, 'KYC_PUBLIC_KEY');
  const kycBusinessSlug = readSetting(env, 'KYC_BUSINESS_SLUG');
  return {
    ...(paymentAccessToken !== undefined && { paymentAccessToken }),
    ...(kycSecretKey !== undefined && { kycSecretKey }),
    ...(kycPublicKey !== undefined && { kycPublicKey }),
    ...(kycBusinessSlug !== undefined && { kycBusinessSlug }),
  };
}

/** Settings of `npm run sandbox` (the two upstream simulators alone). */
export interface SandboxConfig {
  host: string;
  paymentPort: number;
  kycPort: number;
  paymentAccessToken?: string;
  kycSecretKey?: string;
  kycPublicKey?: string;
  kycBusinessSlug?: string;
  /** Delay of the slow references (`SANDBOX_SLOW_MS`). */
  slowMs: number;
  /** `BUSINESSES_FILE`'s businesses, each with its credentials (then none of the four above). */
  businesses?: Array<Omit<BusinessAccount, 'webhookSecrets'>>;
}

/**
 * Reads the settings of the standalone sandbox: `HOST`, `SANDBOX_PAYMENT_PORT` (4010),
 * `SANDBOX_KYC_PORT` (4020), `SANDBOX_SLOW_MS` and the credentials it should expect: those of
 * the single-business settings, or with `BUSINESSES_FILE` each business's of the file (read and
 * refused as the gateway reads and refuses it), so that a gateway beside it with the same file
 * and settings finds every business's account.
 */
export function loadSandboxConfig(env: Env): SandboxConfig {
  const file = businessesFile(env, false);
  return {
    host: readSetting(env, 'HOST'),
    paymentPort: readSetting(env, 'SANDBOX_PAYMENT_PORT'),
    kycPort: readSetting(env, 'SANDBOX_KYC_PORT'),
    slowMs: readSetting(env, 'SANDBOX_SLOW_MS'),
    ...(file
      ? {
          // The webhook secrets stay the gateway's: the standalone sandbox sends no notification.
          businesses: file.accounts.map(({ webhookSecrets: _, ...account }) => account),
        }
      : upstreamCredentials(env)),
  };
}
