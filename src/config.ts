/**
 * The only module that reads the environment. Every setting is validated here; a setting that
 * is present but wrong stops the start with one line naming the variable (never its value when
 * the variable holds a credential).
 */

import type { TracingConfig } from './observability/tracing.ts';

/** A setting that is present but unusable. `variable` names it; the message never holds a secret. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

/** Settings of the payment interface (spec 4.1). */
export interface PaymentUpstreamConfig {
  /** Base address; may carry a path prefix. Always ends without a slash. */
  baseUrl: string;
  accessToken: string;
}

/** Settings of the KYC interface (spec 4.2, 4.3). */
export interface KycUpstreamConfig {
  baseUrl: string;
  secretKey: string;
  publicKey: string;
  businessSlug: string;
  sdkScriptUrl: string;
}

/** How the gateway checks client tokens (contract §3). */
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
  /**
   * Seconds a final transaction is kept past its TTL, to be served (marked stale) only when the
   * payment service is down. 0 turns stale serving off.
   */
  staleSeconds: number;
  // --- Redis (issue 5) ---
  /** Time to open a connection to Redis before giving up on that attempt (ms). */
  connectTimeoutMs: number;
  /** Longest wait for one Redis command; past it the command counts as failed (ms). */
  commandTimeoutMs: number;
  /** Prefix of every Redis key and channel, so that several deployments may share one Redis. */
  keyPrefix: string;
  // --- end Redis ---
  /**
   * AES-256-GCM keys of the records stored in Redis (`CACHE_ENCRYPTION_KEY`): `key` encrypts
   * every write; `oldKeys` (`CACHE_ENCRYPTION_OLD_KEYS`) are still accepted for reading, so
   * that a key can be rotated without losing the cache. Absent: records are stored in clear.
   */
  encryption?: { key: Buffer; oldKeys: Buffer[] };
}

/** Abuse limits (contract §9): checked before execution, with no upstream call. */
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
  /** Most estimated cost; `transactions` counts each of its references. */
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
}

/**
 * Tracing (OpenTelemetry), on when an OTLP endpoint is set. The exporter gets the URL and protocol
 * from here; the SDK reads no further variable.
 */
function tracing(env: Env): TracingConfig | undefined {
  const traces = url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['https:', 'http:']);
  const base = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['https:', 'http:']);
  const endpoint = traces ?? (base === undefined ? undefined : `${base}/v1/traces`);
  if (endpoint === undefined) return undefined;
  const protocol = raw(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      `must be http/protobuf or http/json (got ${JSON.stringify(protocol)})`,
    );
  }
  return {
    url: endpoint,
    protocol,
    serviceName: raw(env, 'OTEL_SERVICE_NAME') ?? 'payment-kyc-gateway',
  };
}

/** Everything the gateway process needs, validated. */
export interface GatewayConfig {
  /** OpenTelemetry export, when an OTLP endpoint is set. */
  tracing?: TracingConfig;
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
  limits: LimitsConfig;
  /** Per-caller rates: end users' tokens (no scope) and service tokens (with scopes). */
  rateLimit: RateLimitConfig & { service: RateLimitConfig };
  /**
   * `off`: any document; `allow`: known documents by hash, and any other document as usual;
   * `only`: known documents only (by hash or by identical text).
   */
  trustedDocuments: TrustedDocumentsMode;
  /** Whether JSON POSTs may take the fast path (same rules, no Fetch conversion). */
  fastPath: boolean;
  /** Whether the KYC web page is served at /kyc. */
  kycPage: boolean;
  /** Most entries in `transactions(txRefs:)`. */
  maxBatchSize: number;
  /** Most distinct upstream records one request may read. */
  maxRecordsPerRequest: number;
  /** One caller's upstream calls in flight in this process, and waiting for a slot. */
  callerShare: { maxConcurrent: number; maxQueued: number };
  log: LogConfig;
  /** How long requests in flight may take to finish on SIGTERM/SIGINT (ms). */
  shutdownGraceMs: number;
  /** Delay of the sandbox's slow references (sandbox mode only, ms). */
  sandboxSlowMs: number;
  /**
   * Live status polling (contract §10), in ms. `heartbeatMs`: how often the poller of a txRef
   * says it is alive (and renews its Redis lock); a poller silent for 3 beats is replaced.
   */
  live: {
    pollMs: number;
    maxPollMs: number;
    maxWatchMs: number;
    heartbeatMs: number;
    /** Live subscriptions one caller may hold at once (in this process). */
    maxPerCaller: number;
  };
}

type Env = Record<string, string | undefined>;

const SECRET_VARIABLES = new Set([
  'PAYMENT_ACCESS_TOKEN',
  'KYC_SECRET_KEY',
  'AUTH_JWT_SECRET',
  'CACHE_URL',
  'CACHE_ENCRYPTION_KEY',
  'CACHE_ENCRYPTION_OLD_KEYS',
]);

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function shown(name: string, value: string): string {
  return SECRET_VARIABLES.has(name) ? '(value hidden)' : JSON.stringify(value);
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) {
    throw new ConfigError(name, `must be a whole number (got ${shown(name, value)})`);
  }
  const parsed = Number(value);
  if (parsed < min || parsed > max) {
    throw new ConfigError(name, `must be from ${min} to ${max} (got ${value})`);
  }
  return parsed;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const lower = value.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(lower)) return true;
  if (['0', 'false', 'no', 'off'].includes(lower)) return false;
  throw new ConfigError(name, `must be true or false (got ${shown(name, value)})`);
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an absolute URL (got ${shown(name, value)})`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(
      name,
      `must use ${protocols.map((p) => p.replace(':', '')).join(' or ')} (got ${parsed.protocol.replace(':', '')})`,
    );
  }
  if (parsed.search || parsed.hash) {
    throw new ConfigError(name, 'must not carry a query string or fragment');
  }
  // A trailing slash does not matter (contract §5): the clients append their own paths.
  return parsed.href.replace(/\/+$/, '');
}

/**
 * True for a host that never leaves the machine: 127.0.0.0/8, ::1, localhost. (URL has already
 * normalised the IPv4 spellings such as `127.1` or `0x7f.1`.)
 */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * An http(s) URL; plain http to another machine only when `plainHttpAllowed` (outside
 * production, or `ALLOW_INSECURE_HTTP=true`): it would carry credentials, records or a script
 * the browser runs, readable and changeable on the way.
 */
function httpUrl(env: Env, name: string, plainHttpAllowed: boolean): string | undefined {
  const value = url(env, name, ['https:', 'http:']);
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

function required(env: Env, name: string, because: string): string {
  const value = raw(env, name);
  if (value === undefined) throw new ConfigError(name, `must be set ${because}`);
  return value;
}

function timeZone(env: Env): string {
  const value = raw(env, 'UPSTREAM_TIME_ZONE') ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
  } catch {
    throw new ConfigError(
      'UPSTREAM_TIME_ZONE',
      `must be an IANA time zone such as UTC or Africa/Lagos (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

function host(env: Env): string {
  const value = raw(env, 'HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(value)) {
    throw new ConfigError(
      'HOST',
      `must be a host name or IP address (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

function slug(name: string, value: string): string {
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(value)) {
    throw new ConfigError(
      name,
      `must be letters, digits, '.', '_' or '-' (got ${shown(name, value)})`,
    );
  }
  return value;
}

function corsOrigins(env: Env): string[] {
  const value = raw(env, 'CORS_ORIGINS');
  if (value === undefined) return [];
  return value.split(',').map((origin) => {
    const trimmed = origin.trim();
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      throw new ConfigError(
        'CORS_ORIGINS',
        `must list origins such as https://app.example (got ${JSON.stringify(trimmed)})`,
      );
    }
    if (parsed.origin !== trimmed.replace(/\/$/, '')) {
      throw new ConfigError(
        'CORS_ORIGINS',
        `must list bare origins, no path (got ${JSON.stringify(trimmed)})`,
      );
    }
    return parsed.origin;
  });
}

// --- Redis (issue 5) ---
function keyPrefix(env: Env): string {
  const value = raw(env, 'CACHE_KEY_PREFIX') ?? 'gw';
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(value)) {
    throw new ConfigError(
      'CACHE_KEY_PREFIX',
      `must be 1 to 64 letters, digits, '.', '_', ':' or '-' (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}
// --- end Redis ---

/** 32 bytes in base64 (standard or URL-safe alphabet, padding optional), or undefined. */
function aesKey(value: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)) return undefined;
  const key = Buffer.from(value, 'base64');
  return key.length === 32 ? key : undefined;
}

const KEY_FORMAT = 'must be 32 bytes in base64 (e.g. from `openssl rand -base64 32`)';

function cacheEncryption(env: Env): CacheConfig['encryption'] {
  const current = raw(env, 'CACHE_ENCRYPTION_KEY');
  const old = raw(env, 'CACHE_ENCRYPTION_OLD_KEYS');
  if (current === undefined) {
    if (old !== undefined) {
      throw new ConfigError('CACHE_ENCRYPTION_OLD_KEYS', 'needs CACHE_ENCRYPTION_KEY to be set');
    }
    return undefined;
  }
  const key = aesKey(current);
  if (!key) throw new ConfigError('CACHE_ENCRYPTION_KEY', KEY_FORMAT);
  const oldKeys = (old ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry, index) => {
      const oldKey = aesKey(entry);
      if (!oldKey) {
        throw new ConfigError(
          'CACHE_ENCRYPTION_OLD_KEYS',
          `entry ${index + 1}: ${KEY_FORMAT}, comma-separated`,
        );
      }
      return oldKey;
    });
  return { key, oldKeys };
}

function trustedDocuments(env: Env): TrustedDocumentsMode {
  const value = (raw(env, 'TRUSTED_DOCUMENTS') ?? 'allow').toLowerCase();
  if (value === 'off' || value === 'allow' || value === 'only') return value;
  throw new ConfigError(
    'TRUSTED_DOCUMENTS',
    `must be off, allow or only (got ${JSON.stringify(value)})`,
  );
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function logLevel(env: Env): LogConfig['level'] {
  const value = (raw(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  const level = LOG_LEVELS.find((l) => l === value);
  if (!level) {
    throw new ConfigError(
      'LOG_LEVEL',
      `must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(value)})`,
    );
  }
  return level;
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
  const disabled = boolean(env, 'AUTH_DISABLED', false);
  const jwtSecret = raw(env, 'AUTH_JWT_SECRET');
  const jwksUrl = httpUrl(env, 'AUTH_JWKS_URL', plainHttpAllowed);
  const issuer = raw(env, 'AUTH_ISSUER');
  const audience = raw(env, 'AUTH_AUDIENCE');
  if (disabled && production) {
    throw new ConfigError(
      'AUTH_DISABLED',
      'must not be true in production (every caller could read everything)',
    );
  }
  if (disabled) return { mode: 'disabled' };
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret, 'utf8') < 32) {
    throw new ConfigError('AUTH_JWT_SECRET', 'must be at least 32 bytes long for HS256');
  }
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
 * Reads and validates the gateway's settings (contract §5).
 * @throws ConfigError naming the first unusable variable.
 */
export function loadConfig(env: Env): GatewayConfig {
  const production =
    raw(env, 'NODE_ENV') === 'production' || boolean(env, 'GATEWAY_PRODUCTION', false);
  const plainHttpAllowed = !production || boolean(env, 'ALLOW_INSECURE_HTTP', false);
  const paymentUrl = httpUrl(env, 'PAYMENT_API_URL', plainHttpAllowed);
  const kycUrl = httpUrl(env, 'KYC_API_URL', plainHttpAllowed);
  const sandbox = paymentUrl === undefined && kycUrl === undefined;
  const sandboxSetting =
    raw(env, 'SANDBOX') === undefined ? undefined : boolean(env, 'SANDBOX', false);
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
  const payment =
    paymentUrl === undefined
      ? undefined
      : { baseUrl: paymentUrl, accessToken: required(env, 'PAYMENT_ACCESS_TOKEN', because) };
  const kyc =
    kycUrl === undefined
      ? undefined
      : {
          baseUrl: kycUrl,
          secretKey: required(env, 'KYC_SECRET_KEY', because),
          publicKey: required(env, 'KYC_PUBLIC_KEY', because),
          businessSlug: slug('KYC_BUSINESS_SLUG', required(env, 'KYC_BUSINESS_SLUG', because)),
          sdkScriptUrl:
            httpUrl(env, 'KYC_SDK_SCRIPT_URL', plainHttpAllowed) ??
            required(env, 'KYC_SDK_SCRIPT_URL', because),
        };
  const businessSlug = raw(env, 'KYC_BUSINESS_SLUG');
  const cacheUrl = url(env, 'CACHE_URL', ['redis:', 'rediss:']);
  const authConfig = auth(env, production, sandbox && !production, plainHttpAllowed);
  const encryption = cacheEncryption(env);
  const tracingConfig = tracing(env);
  return {
    ...(tracingConfig && { tracing: tracingConfig }),
    host: host(env),
    port: integer(env, 'PORT', 4000, 0, 65535),
    production,
    sandbox,
    ...(payment && { payment }),
    ...(kyc && { kyc }),
    sandboxCredentials: {
      ...optional('paymentAccessToken', raw(env, 'PAYMENT_ACCESS_TOKEN')),
      ...optional('kycSecretKey', raw(env, 'KYC_SECRET_KEY')),
      ...optional('kycPublicKey', raw(env, 'KYC_PUBLIC_KEY')),
      ...optional(
        'kycBusinessSlug',
        businessSlug === undefined ? undefined : slug('KYC_BUSINESS_SLUG', businessSlug),
      ),
    },
    upstreamTimeZone: timeZone(env),
    upstream: {
      timeoutMs: integer(env, 'UPSTREAM_TIMEOUT_MS', 5000, 50, 120_000),
      maxAttempts: integer(env, 'UPSTREAM_MAX_ATTEMPTS', 3, 1, 10),
      retryBaseDelayMs: integer(env, 'UPSTREAM_RETRY_BASE_DELAY_MS', 100, 1, 10_000),
      maxConnections: integer(env, 'UPSTREAM_MAX_CONNECTIONS', 64, 1, 10_000),
      maxConcurrent: integer(env, 'UPSTREAM_MAX_CONCURRENT', 256, 1, 100_000),
      maxQueued: integer(env, 'UPSTREAM_MAX_QUEUED', 1000, 0, 1_000_000),
      breakerFailureRate: integer(env, 'UPSTREAM_BREAKER_FAILURE_PERCENT', 50, 1, 100) / 100,
      breakerWindowMs: integer(env, 'UPSTREAM_BREAKER_WINDOW_MS', 10_000, 100, 600_000),
      breakerMinCalls: integer(env, 'UPSTREAM_BREAKER_MIN_CALLS', 10, 1, 100_000),
      breakerHalfOpenMs: integer(env, 'UPSTREAM_BREAKER_HALF_OPEN_MS', 10_000, 10, 600_000),
    },
    cache: {
      ...(cacheUrl !== undefined && { url: cacheUrl }),
      ttlFinalSeconds: integer(env, 'CACHE_TTL_FINAL_SECONDS', 86_400, 0, 31_536_000),
      ttlPendingSeconds: integer(env, 'CACHE_TTL_PENDING_SECONDS', 5, 0, 3600),
      ttlKycSeconds: integer(env, 'CACHE_TTL_KYC_SECONDS', 60, 0, 86_400),
      ttlNotFoundSeconds: integer(env, 'CACHE_TTL_NOT_FOUND_SECONDS', 5, 0, 3600),
      maxEntries: integer(env, 'CACHE_MAX_ENTRIES', 10_000, 1, 10_000_000),
      staleSeconds: integer(env, 'CACHE_STALE_SECONDS', 604_800, 0, 31_536_000),
      // --- Redis (issue 5) ---
      connectTimeoutMs: integer(env, 'CACHE_CONNECT_TIMEOUT_MS', 2000, 50, 60_000),
      commandTimeoutMs: integer(env, 'CACHE_COMMAND_TIMEOUT_MS', 250, 10, 60_000),
      keyPrefix: keyPrefix(env),
      // --- end Redis ---
      ...(encryption && { encryption }),
    },
    log: {
      level: logLevel(env),
      redactPaths: (raw(env, 'LOG_REDACT_PATHS') ?? '')
        .split(',')
        .map((path) => path.trim())
        .filter(Boolean),
    },
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 300_000),
    sandboxSlowMs: integer(env, 'SANDBOX_SLOW_MS', 10_000, 0, 600_000),
    ...(authConfig && { auth: authConfig }),
    graphiql: boolean(env, 'GRAPHIQL', !production),
    introspection: boolean(env, 'INTROSPECTION', !production),
    corsOrigins: corsOrigins(env),
    limits: {
      depth: integer(env, 'LIMIT_DEPTH', 12, 1, 1000),
      aliases: integer(env, 'LIMIT_ALIASES', 30, 0, 10_000),
      directives: integer(env, 'LIMIT_DIRECTIVES', 50, 0, 10_000),
      tokens: integer(env, 'LIMIT_TOKENS', 5000, 10, 1_000_000),
      documentBytes: integer(env, 'LIMIT_DOCUMENT_BYTES', 65_536, 64, 16_777_216),
      bodyBytes: integer(env, 'LIMIT_BODY_BYTES', 1_048_576, 1024, 104_857_600),
      rootFields: integer(env, 'LIMIT_ROOT_FIELDS', 20, 1, 100),
      cost: integer(env, 'LIMIT_COST', 5000, 1, 1_000_000),
      fragments: integer(env, 'LIMIT_FRAGMENTS', 32, 0, 10_000),
      documentCacheBytes: integer(env, 'DOCUMENT_CACHE_BYTES', 33_554_432, 0, 4_294_967_296),
      requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    },
    rateLimit: {
      rps: integer(env, 'RATE_LIMIT_RPS', 10, 0, 1_000_000),
      burst: integer(env, 'RATE_LIMIT_BURST', 60, 1, 1_000_000),
      service: {
        rps: integer(env, 'SERVICE_RATE_LIMIT_RPS', 200, 0, 1_000_000),
        burst: integer(env, 'SERVICE_RATE_LIMIT_BURST', 400, 1, 1_000_000),
      },
    },
    trustedDocuments: trustedDocuments(env),
    fastPath: boolean(env, 'FAST_PATH', true),
    kycPage: boolean(env, 'KYC_PAGE', sandbox),
    maxBatchSize: integer(env, 'MAX_BATCH_SIZE', 100, 1, 100),
    maxRecordsPerRequest: integer(env, 'MAX_RECORDS_PER_REQUEST', 100, 1, 10_000),
    callerShare: {
      maxConcurrent: integer(env, 'UPSTREAM_MAX_CONCURRENT_PER_CALLER', 16, 1, 100_000),
      maxQueued: integer(env, 'UPSTREAM_MAX_QUEUED_PER_CALLER', 1000, 0, 1_000_000),
    },
    live: {
      pollMs: integer(env, 'LIVE_POLL_MS', 1000, 100, 2000),
      maxPollMs: integer(env, 'LIVE_MAX_POLL_MS', 30_000, 100, 300_000),
      maxWatchMs: integer(env, 'LIVE_MAX_WATCH_SECONDS', 900, 1, 86_400) * 1000,
      heartbeatMs: integer(env, 'LIVE_HEARTBEAT_MS', 1000, 50, 60_000),
      maxPerCaller: integer(env, 'LIVE_MAX_PER_CALLER', 10, 1, 100_000),
    },
  };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
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
}

/**
 * Reads the settings of the standalone sandbox: `HOST`, `SANDBOX_PAYMENT_PORT` (4010),
 * `SANDBOX_KYC_PORT` (4020) and the credentials it should expect.
 */
export function loadSandboxConfig(env: Env): SandboxConfig {
  const businessSlug = raw(env, 'KYC_BUSINESS_SLUG');
  const tracingConfig = tracing(env);
  return {
    ...(tracingConfig && { tracing: tracingConfig }),
    host: host(env),
    paymentPort: integer(env, 'SANDBOX_PAYMENT_PORT', 4010, 0, 65535),
    kycPort: integer(env, 'SANDBOX_KYC_PORT', 4020, 0, 65535),
    ...optional('paymentAccessToken', raw(env, 'PAYMENT_ACCESS_TOKEN')),
    ...optional('kycSecretKey', raw(env, 'KYC_SECRET_KEY')),
    ...optional('kycPublicKey', raw(env, 'KYC_PUBLIC_KEY')),
    ...optional(
      'kycBusinessSlug',
      businessSlug === undefined ? undefined : slug('KYC_BUSINESS_SLUG', businessSlug),
    ),
  };
}
