/**
 * Every environment variable the gateway (and `npm run sandbox`) reads, declared once: its zod
 * schema (how the text is read and what it may be), its default, one line for the docs, and
 * whether it is a secret (its value never appears in an error). `config.ts` reads the
 * environment only through `readSetting`, so an undeclared variable cannot be read, and
 * `npm run docs:settings` writes the table of docs/api.md from here.
 *
 * A schema's messages may hold `{value}`: the text read, quoted, or `(value hidden)` for a
 * secret; and `{text}`: the text as it is (only in messages of variables that are no secret).
 */
import { z } from 'zod';
import { parseRedisUrl } from './state/redis-url.ts';

/** One declared variable. */
export interface Setting<T> {
  /** Reads the trimmed text of a variable that is set (never empty). */
  schema: z.ZodType<T, string>;
  /** The value when the variable is unset or empty; absent: the reader decides (see `shown`). */
  default?: T;
  /** The default as the docs state it, when it is not `default` itself (or there is none). */
  shownDefault?: string;
  description: string;
  secret?: boolean;
}

function integer(min: number, max: number): z.ZodType<number, string> {
  return z
    .string()
    .regex(/^-?\d+$/, 'must be a whole number (got {value})')
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be from ${min} to ${max} (got {text})`);
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

const flag: z.ZodType<boolean, string> = z
  .string()
  .refine(
    (v) => TRUE.has(v.toLowerCase()) || FALSE.has(v.toLowerCase()),
    'must be true or false (got {value})',
  )
  .transform((v) => TRUE.has(v.toLowerCase()));

const text: z.ZodType<string, string> = z.string();

/**
 * An absolute URL with one of `protocols`, no query or fragment, without its trailing slash (the
 * clients append their own paths).
 */
function url(protocols: readonly string[]): z.ZodType<string, string> {
  return z.string().transform((value, ctx) => {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute URL (got {value})' });
      return z.NEVER;
    }
    if (!protocols.includes(parsed.protocol)) {
      const names = protocols.map((p) => p.replace(':', '')).join(' or ');
      ctx.addIssue({
        code: 'custom',
        message: `must use ${names} (got ${parsed.protocol.replace(':', '')})`,
      });
      return z.NEVER;
    }
    if (parsed.search || parsed.hash) {
      ctx.addIssue({ code: 'custom', message: 'must not carry a query string or fragment' });
      return z.NEVER;
    }
    return parsed.href.replace(/\/+$/, '');
  });
}

const httpUrl = url(['https:', 'http:']);

/** `CACHE_URL`: one of the forms of state/redis-url.ts, kept as written (it is read there). */
const redisUrl: z.ZodType<string, string> = z.string().transform((value, ctx) => {
  try {
    const target = parseRedisUrl(value);
    return target.kind === 'node' ? target.url : value;
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

const slug: z.ZodType<string, string> = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, "must be letters, digits, '.', '_' or '-' (got {value})");

function oneOf<const T extends string>(values: readonly T[], message: string) {
  return z
    .string()
    .transform((v) => v.toLowerCase())
    .refine((v): v is T => (values as readonly string[]).includes(v), message) as z.ZodType<
    T,
    string
  >;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The production features `BENCH_FEATURES_OFF` may turn off, for `npm run bench -- --features`
 * only (refused in production, see config.ts): `breaker` (the circuit breaker and the cap on
 * concurrent upstream calls), `cache-write` (records are not stored), `single-flight` (concurrent
 * misses of one key are not shared), `caller-share` (no per-caller cap on upstream calls),
 * `metrics` (no Prometheus observation on the request path).
 */
export const BENCH_FEATURES = [
  'breaker',
  'cache-write',
  'single-flight',
  'caller-share',
  'metrics',
] as const;
export type BenchFeature = (typeof BENCH_FEATURES)[number];

/** A comma-separated list, entries trimmed, empty entries dropped. */
const list: z.ZodType<string[], string> = z.string().transform((v) =>
  v
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean),
);

/** A comma-separated list of HTTP header names (RFC 9110 tokens), lower-cased. */
const headerNames: z.ZodType<string[], string> = z.string().transform((value, ctx) => {
  const out: string[] = [];
  for (const name of value.split(',')) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed === '') continue;
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(trimmed)) {
      ctx.addIssue({
        code: 'custom',
        message: `must list header names (got ${JSON.stringify(trimmed)})`,
      });
      return z.NEVER;
    }
    out.push(trimmed);
  }
  return out;
});

const origins: z.ZodType<string[], string> = z.string().transform((value, ctx) => {
  const out: string[] = [];
  for (const origin of value.split(',')) {
    const trimmed = origin.trim();
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: `must list origins such as https://app.example (got ${JSON.stringify(trimmed)})`,
      });
      return z.NEVER;
    }
    if (parsed.origin !== trimmed.replace(/\/$/, '')) {
      ctx.addIssue({
        code: 'custom',
        message: `must list bare origins, no path (got ${JSON.stringify(trimmed)})`,
      });
      return z.NEVER;
    }
    out.push(parsed.origin);
  }
  return out;
});

const timeZone: z.ZodType<string, string> = z.string().refine((zone) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}, 'must be an IANA time zone such as UTC or Africa/Lagos (got {value})');

/** 32 bytes in base64 (standard or URL-safe alphabet, padding optional). */
function aesKey(value: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)) return undefined;
  const key = Buffer.from(value, 'base64');
  return key.length === 32 ? key : undefined;
}

const KEY_FORMAT = 'must be 32 bytes in base64 (e.g. from `openssl rand -base64 32`)';

const encryptionKey: z.ZodType<Buffer, string> = z.string().transform((value, ctx) => {
  const key = aesKey(value);
  if (key) return key;
  ctx.addIssue({ code: 'custom', message: KEY_FORMAT });
  return z.NEVER;
});

const encryptionKeys: z.ZodType<Buffer[], string> = list.transform((entries, ctx) => {
  const keys: Buffer[] = [];
  for (const [index, entry] of entries.entries()) {
    const key = aesKey(entry);
    if (!key) {
      ctx.addIssue({
        code: 'custom',
        message: `entry ${index + 1}: ${KEY_FORMAT}, comma-separated`,
      });
      return z.NEVER;
    }
    keys.push(key);
  }
  return keys;
});

/** A variable with a fixed default: reading it never gives undefined. */
type Defaulted<T> = Setting<T> & { default: T };

const int = (
  min: number,
  max: number,
  fallback: number,
  description: string,
): Defaulted<number> => ({
  schema: integer(min, max),
  default: fallback,
  description,
});

const bool = (fallback: boolean, description: string): Defaulted<boolean> => ({
  schema: flag,
  default: fallback,
  description,
});

/** The declared variables, in the order of the docs table. */
export const SETTINGS = {
  PORT: int(0, 65535, 4000, 'Port the gateway listens on (`0`: any free port).'),
  METRICS_PORT: {
    schema: integer(0, 65535),
    shownDefault: 'unset: on `PORT`',
    description:
      'A port of its own for `GET /metrics` (on `HOST`); set, `/metrics` is no longer served on `PORT` (`0`: any free port).',
  } satisfies Setting<number>,
  HOST: {
    schema: z
      .string()
      .regex(/^[A-Za-z0-9.:[\]-]+$/, 'must be a host name or IP address (got {value})'),
    default: '127.0.0.1',
    description: 'Address the gateway (and `npm run sandbox`) listens on.',
  } satisfies Setting<string>,
  NODE_ENV: {
    schema: text,
    shownDefault: 'unset',
    description: '`production`: production mode (see `GATEWAY_PRODUCTION`).',
  } satisfies Setting<string>,
  GATEWAY_PRODUCTION: bool(
    false,
    'Production mode as with `NODE_ENV=production`: GraphiQL and introspection off unless enabled, field suggestions hidden, limit values not stated, and the refusals below.',
  ),
  PAYMENT_API_URL: {
    schema: httpUrl,
    shownDefault: 'unset',
    description:
      'Base address of the payment interface. Unset with `KYC_API_URL`: sandbox mode outside production.',
  } satisfies Setting<string>,
  PAYMENT_ACCESS_TOKEN: {
    schema: text,
    shownDefault: 'unset',
    description:
      'Bearer token of the payment interface (in sandbox mode: the one the sandbox expects).',
    secret: true,
  } satisfies Setting<string>,
  KYC_API_URL: {
    schema: httpUrl,
    shownDefault: 'unset',
    description: 'Base address of the KYC interface; set with `PAYMENT_API_URL`.',
  } satisfies Setting<string>,
  KYC_SECRET_KEY: {
    schema: text,
    shownDefault: 'unset',
    description: 'Secret key of the KYC interface (`x-secret-key`); required with the API URLs.',
    secret: true,
  } satisfies Setting<string>,
  KYC_PUBLIC_KEY: {
    schema: text,
    shownDefault: 'unset',
    description: 'Public key the KYC widget presents; required with the API URLs.',
  } satisfies Setting<string>,
  KYC_BUSINESS_SLUG: {
    schema: slug,
    shownDefault: 'unset',
    description: 'The business slug of KYC calls and the widget; required with the API URLs.',
  } satisfies Setting<string>,
  BUSINESSES_FILE: {
    schema: text,
    shownDefault: 'unset: one business',
    description:
      'A JSON file of the businesses this gateway serves, each with its own provider account (docs/operations.md); `SIGHUP` reads it again. Refused with the single-business credentials.',
  } satisfies Setting<string>,
  SANDBOX_BUSINESSES: int(
    1,
    10,
    1,
    'Sandbox mode: how many demo businesses the built-in simulators serve (from 2, tokens name one in `biz`).',
  ),
  KYC_SDK_SCRIPT_URL: {
    schema: httpUrl,
    shownDefault: 'unset',
    description: "Address of the provider's KYC widget script; required with the API URLs.",
  } satisfies Setting<string>,
  SANDBOX: {
    schema: flag,
    shownDefault: 'unset',
    description:
      '`true` starts the built-in simulators on purpose (also in production, where auth is still required); `false` refuses to start without API URLs.',
  } satisfies Setting<boolean>,
  ALLOW_INSECURE_HTTP: bool(
    false,
    'In production, accepts plain `http:` to a non-loopback host for the API URLs, `KYC_SDK_SCRIPT_URL` and `AUTH_JWKS_URL`.',
  ),
  UPSTREAM_TIME_ZONE: {
    schema: timeZone,
    default: 'UTC',
    description: 'IANA zone in which upstream times (which carry no zone) are read.',
  } satisfies Setting<string>,
  UPSTREAM_TIMEOUT_MS: int(
    50,
    120_000,
    5000,
    'Time budget of one upstream read, retries included.',
  ),
  UPSTREAM_MAX_ATTEMPTS: int(
    1,
    10,
    3,
    'Most HTTP calls for one read (retries on connection errors, 429, 502, 503, 504).',
  ),
  UPSTREAM_RETRY_BASE_DELAY_MS: int(
    1,
    10_000,
    100,
    'First backoff; grows per retry, with jitter. `Retry-After` wins when given.',
  ),
  UPSTREAM_MAX_CONNECTIONS: int(1, 10_000, 64, 'Keep-alive connections per upstream.'),
  UPSTREAM_MAX_CONCURRENT: {
    schema: integer(1, 100_000),
    shownDefault: 'unset: `UPSTREAM_MAX_CONNECTIONS`',
    description:
      'Calls in flight per upstream; the others wait for a slot, within their time budget. More than `UPSTREAM_MAX_CONNECTIONS` makes the extra calls wait in the HTTP client instead, where a call whose request has ended is still made.',
  } satisfies Setting<number>,
  UPSTREAM_MAX_QUEUED: int(
    0,
    1_000_000,
    1000,
    'Calls waiting for a slot per upstream; beyond it, `UPSTREAM_UNAVAILABLE` at once.',
  ),
  UPSTREAM_MAX_CONCURRENT_PER_CALLER: int(
    1,
    100_000,
    16,
    "An end user's (a token without scopes) upstream calls in flight, in one process.",
  ),
  SERVICE_UPSTREAM_MAX_CONCURRENT_PER_CALLER: int(
    1,
    100_000,
    64,
    "A service's (a token with scopes: a merchant's backend, many requests at once) upstream calls in flight, in one process.",
  ),
  UPSTREAM_MAX_QUEUED_PER_CALLER: int(
    0,
    1_000_000,
    1000,
    "One caller's upstream calls waiting in its own queue, in one process.",
  ),
  UPSTREAM_BREAKER_FAILURE_PERCENT: int(
    1,
    100,
    50,
    'The circuit of an upstream opens when this share of its calls failed over the window.',
  ),
  UPSTREAM_BREAKER_WINDOW_MS: int(
    100,
    600_000,
    10_000,
    'The window the failure share is taken over.',
  ),
  UPSTREAM_BREAKER_MIN_CALLS: int(
    1,
    100_000,
    10,
    'Calls the window must hold before the circuit may open.',
  ),
  UPSTREAM_BREAKER_HALF_OPEN_MS: int(
    10,
    600_000,
    10_000,
    'How long an open circuit waits before letting one probe call through.',
  ),
  CACHE_URL: {
    schema: redisUrl,
    shownDefault: 'unset: in memory',
    description:
      'Redis for what replicas share (cache, locks, live-status pollers, rate limits, claims). One node: `redis://[user:password@]host:port[/db]`; a Redis Cluster: `redis+cluster://[user:password@]host:port,host:port,…` (some of its nodes; the others are discovered); Redis Sentinel: `redis+sentinel://[user:password@]host:port,…/<master name>` (its sentinels); `rediss` instead of `redis` for TLS. The user and password (ACL) apply to every Redis node.',
    secret: true,
  } satisfies Setting<string>,
  CACHE_TTL_FINAL_SECONDS: int(
    0,
    31_536_000,
    86_400,
    'How long a SUCCESSFUL or FAILED transaction is cached.',
  ),
  CACHE_TTL_PENDING_SECONDS: int(0, 3600, 5, 'How long a transaction that is not final is cached.'),
  CACHE_TTL_KYC_SECONDS: int(0, 86_400, 60, 'How long KYC details are cached.'),
  CACHE_TTL_NOT_FOUND_SECONDS: int(
    0,
    3600,
    5,
    'How long an unknown reference or user is remembered (`0`: not at all).',
  ),
  CACHE_MAX_ENTRIES: int(
    1,
    10_000_000,
    10_000,
    'Bound of the in-memory cache in records (least recently used leave first).',
  ),
  CACHE_MAX_BYTES: int(
    65_536,
    17_179_869_184,
    4_194_304,
    'Bound of the in-memory cache in (estimated) heap bytes of its records, beside `CACHE_MAX_ENTRIES`: 4 MiB holds about 3,600 transactions or 1,200 KYC users. Larger means more hits and more memory; `CACHE_URL` (Redis) for a large shared cache.',
  ),
  CACHE_FREEZE_RECORDS: {
    schema: flag,
    shownDefault: 'on except in production',
    description:
      'Freeze each record as the in-memory cache stores it, so that code writing to a record shared by requests throws: a guard for development and tests (the record types are read-only). Off in production, where it cost about 3 % of the CPU of a request reading twenty new records.',
  } satisfies Setting<boolean>,
  CACHE_STALE_SECONDS: int(
    0,
    31_536_000,
    604_800,
    'How long a final transaction is kept past its TTL, to be served (marked stale) only while the payment service is down. `0`: never.',
  ),
  CACHE_CONNECT_TIMEOUT_MS: int(
    50,
    60_000,
    2000,
    'Longest wait for a connection to Redis (the start waits for it at most this long).',
  ),
  CACHE_COMMAND_TIMEOUT_MS: int(
    10,
    60_000,
    250,
    'Longest wait for one Redis command; after a timeout, Redis counts as down for 1 s.',
  ),
  CACHE_KEY_PREFIX: {
    schema: z
      .string()
      .regex(
        /^[A-Za-z0-9._:-]{1,64}$/,
        "must be 1 to 64 letters, digits, '.', '_', ':' or '-' (got {value})",
      ),
    default: 'gw',
    description: 'Prefix of every Redis key and channel (several deployments may share one Redis).',
  } satisfies Setting<string>,
  CACHE_ENCRYPTION_KEY: {
    schema: encryptionKey,
    shownDefault: 'unset',
    description:
      '32 bytes, base64 (`openssl rand -base64 32`): records written to Redis are encrypted (AES-256-GCM).',
    secret: true,
  } satisfies Setting<Buffer>,
  CACHE_ENCRYPTION_OLD_KEYS: {
    schema: encryptionKeys,
    shownDefault: 'unset',
    description: 'Comma-separated earlier keys, read but never written (rotation).',
    secret: true,
  } satisfies Setting<Buffer[]>,
  CONFIRMATION_RETENTION_DAYS: int(
    1,
    36_500,
    400,
    "How long `confirmPayment` keeps a payment's claim for its order (in Redis with `CACHE_URL`, else in memory): within it, another order id gets `ALREADY_CONFIRMED_FOR_ANOTHER_ORDER`.",
  ),
  ALLOW_MEMORY_CLAIMS: bool(
    false,
    "In production without `CACHE_URL`, lets `confirmPayment` keep its claims in this process's memory (one replica only, forgotten on restart, so a payment may then confirm a second order); without it, `confirmPayment` confirms nothing there.",
  ),
  MAX_BATCH_SIZE: int(1, 100, 100, 'Most entries in `transactions(txRefs:)`.'),
  MAX_RECORDS_PER_REQUEST: int(
    1,
    10_000,
    100,
    'Distinct upstream records one request may read; past it `BAD_USER_INPUT` at those positions, no call.',
  ),
  LIVE_POLL_MS: int(
    100,
    2000,
    1000,
    '`transactionStatus` and `kycStatus` polling interval during the first minute.',
  ),
  LIVE_MAX_POLL_MS: int(
    100,
    300_000,
    30_000,
    'The polling interval grows up to this after the first minute.',
  ),
  LIVE_MAX_WATCH_SECONDS: int(
    1,
    86_400,
    900,
    'How long one `transactionStatus` may watch (it then ends with an error), or one `kycStatus` (it then completes).',
  ),
  LIVE_HEARTBEAT_MS: int(
    50,
    60_000,
    1000,
    'Heartbeat of a live poller (one silent for 3 beats is replaced).',
  ),
  LIVE_MAX_PER_CALLER: int(
    1,
    100_000,
    10,
    'Live subscriptions one caller may hold at once (across every replica when `CACHE_URL` is set); one more is `RATE_LIMITED`.',
  ),
  WEBHOOK_SECRET: {
    schema: z
      .string()
      .refine(
        (secret) => Buffer.byteLength(secret, 'utf8') >= 16,
        'must be at least 16 bytes long (e.g. from `openssl rand -hex 32`)',
      ),
    shownDefault: 'unset: no webhooks',
    description:
      'Key of the HMAC-SHA256 signatures of `POST /webhooks/payment` and `POST /webhooks/kyc` (docs/webhooks.md); unset, both paths answer 404. In sandbox mode a secret is made per run when unset.',
    secret: true,
  } satisfies Setting<string>,
  WEBHOOK_OLD_SECRETS: {
    schema: list,
    shownDefault: 'unset',
    description:
      'Comma-separated earlier webhook secrets, still accepted while senders move to the new one (rotation).',
    secret: true,
  } satisfies Setting<string[]>,
  WEBHOOK_TOLERANCE_SECONDS: int(
    1,
    3600,
    300,
    'How far the signed time `t` of a notification may be from now; also how long a notification is remembered to answer its replays 200.',
  ),
  WEBHOOK_POLL_BACKOFF: int(
    1,
    1000,
    5,
    'Live polls of a record that a notification has covered wait this many times longer (the notifications carry its changes; polls are the fallback). `1`: no difference.',
  ),
  AUTH_JWT_SECRET: {
    schema: z
      .string()
      .refine(
        (secret) => Buffer.byteLength(secret, 'utf8') >= 32,
        'must be at least 32 bytes long for HS256',
      ),
    shownDefault: 'unset',
    description: 'HS256 secret (UTF-8 bytes, at least 32).',
    secret: true,
  } satisfies Setting<string>,
  AUTH_JWKS_URL: {
    schema: httpUrl,
    shownDefault: 'unset',
    description: 'JWKS for RS256/ES256 tokens.',
  } satisfies Setting<string>,
  AUTH_BUSINESS_CLAIM: {
    schema: z
      .string()
      .regex(
        /^[A-Za-z0-9_.:-]{1,64}$/,
        "must be a claim name: letters, digits, '_', '.', ':' or '-' (got {value})",
      ),
    default: 'biz',
    description:
      'With `BUSINESSES_FILE`: the token claim naming the business a request belongs to.',
  } satisfies Setting<string>,
  AUTH_ISSUER: {
    schema: text,
    shownDefault: 'unset',
    description: 'Checked against `iss` when set.',
  } satisfies Setting<string>,
  AUTH_AUDIENCE: {
    schema: text,
    shownDefault: 'unset',
    description: 'Checked against `aud` when set.',
  } satisfies Setting<string>,
  AUTH_DISABLED: bool(
    false,
    'Turns checking off, for local work only (said loudly at start); refused in production.',
  ),
  GRAPHIQL: {
    schema: flag,
    shownDefault: 'on except in production',
    description: 'GraphiQL on `GET /graphql` from a browser.',
  } satisfies Setting<boolean>,
  INTROSPECTION: {
    schema: flag,
    shownDefault: 'on except in production',
    description: 'Whether introspection is answered.',
  } satisfies Setting<boolean>,
  KYC_PAGE: {
    schema: flag,
    shownDefault: 'on in sandbox mode',
    description: 'The KYC web page at `/kyc` (404 when off).',
  } satisfies Setting<boolean>,
  CORS_ORIGINS: {
    schema: origins,
    default: [],
    shownDefault: 'unset: no CORS',
    description: 'Comma-separated origins allowed to call from a browser (no credentials mode).',
  } satisfies Setting<string[]>,
  CORS_ALLOWED_HEADERS: {
    schema: headerNames,
    default: [],
    shownDefault: 'unset: the default list only',
    description:
      'Comma-separated request headers allowed from a CORS origin, added to the default list (authorization, content-type, accept, x-request-id, traceparent, tracestate, baggage, x-graphql-event-stream-token, x-graphql-yoga-csrf, graphql-preflight, apollo-require-preflight).',
  } satisfies Setting<string[]>,
  CONNECTIONS_MAX_PER_CALLER: int(
    1,
    100_000,
    20,
    'WebSocket connections and graphql-sse reservations one caller may hold at once; one more is HTTP 429 or WebSocket close 4429.',
  ),
  SSE_RESERVATION_UNUSED_MS: int(
    100,
    3_600_000,
    30_000,
    'Time a graphql-sse reservation (single connection mode) may stay without its stream opened; past it the reservation is dropped and its slot given back.',
  ),
  MAX_CONNECTIONS: int(
    1,
    1_000_000,
    10_000,
    'Sockets the process holds at once; further connections are closed at once.',
  ),
  MAX_IDLE_SOCKETS_PER_ADDRESS: int(
    0,
    1_000_000,
    100,
    "Idle sockets (no request being served) one remote address may hold; past it, that address's oldest sockets idle for a second are closed. Behind a load balancer every connection is the balancer's: at least its pool size, or `0` (off).",
  ),
  STREAM_MAX_BUFFERED_BYTES: int(
    65_536,
    1_073_741_824,
    4_194_304,
    'Bytes that may wait to be written to one stream (graphql-sse, multipart, WebSocket); past it the stream is ended (WebSocket close 1008, SSE or multipart answer ended, graphql-sse reservation dropped).',
  ),
  STREAM_WRITE_TIMEOUT_MS: int(
    100,
    600_000,
    30_000,
    'Time what waits to be written to a stream may go without any of it being written; past it the stream is ended as for `STREAM_MAX_BUFFERED_BYTES`.',
  ),
  LIMIT_DEPTH: int(1, 1000, 12, 'Deepest selection, checked before execution.'),
  LIMIT_ALIASES: int(0, 10_000, 30, 'Most aliases in one document.'),
  LIMIT_DIRECTIVES: int(0, 10_000, 50, 'Most directives in one document.'),
  LIMIT_TOKENS: int(10, 1_000_000, 5000, 'Most lexical tokens in one document.'),
  LIMIT_DOCUMENT_BYTES: int(64, 16_777_216, 65_536, 'Largest GraphQL document, in bytes.'),
  LIMIT_BODY_BYTES: int(1024, 104_857_600, 1_048_576, 'Largest request body, in bytes.'),
  LIMIT_ROOT_FIELDS: int(1, 100, 20, 'Most root fields in one operation (fragments expanded).'),
  LIMIT_COST: int(
    1,
    1_000_000,
    5000,
    "Most estimated cost; `transactions` and federation's `_entities` count each of their references.",
  ),
  LIMIT_FRAGMENTS: int(0, 10_000, 32, 'Most fragment definitions in one document.'),
  DOCUMENT_CACHE_BYTES: int(
    0,
    4_294_967_296,
    33_554_432,
    'Memory for parsed documents kept for reuse (only those that validated).',
  ),
  REQUEST_TIMEOUT_MS: int(
    100,
    600_000,
    30_000,
    'Time a client has to send its headers and body; slower connections are closed (408).',
  ),
  RATE_LIMIT_RPS: int(
    0,
    1_000_000,
    10,
    "End users' tokens (no scope): sustained requests per second per caller (the token's `sub`). `0` turns it off.",
  ),
  RATE_LIMIT_BURST: int(1, 1_000_000, 60, "End users' tokens: requests at once above that rate."),
  SERVICE_RATE_LIMIT_RPS: int(
    0,
    1_000_000,
    200,
    'Service tokens (with scopes), in buckets of their own: sustained requests per second. `0` turns it off.',
  ),
  SERVICE_RATE_LIMIT_BURST: int(
    1,
    1_000_000,
    400,
    'Service tokens: requests at once above that rate.',
  ),
  TRUSTED_DOCUMENTS: {
    schema: oneOf(['off', 'allow', 'only'], 'must be off, allow or only (got {value})'),
    default: 'allow',
    description:
      "Persisted documents. `allow`: the project's known documents by id or hash, any other document, and automatic persisted queries; `only`: known documents only; `off`: no persisted documents.",
  } satisfies Setting<'off' | 'allow' | 'only'>,
  PERSISTED_REGISTRATIONS_PER_MINUTE: int(
    0,
    1_000_000,
    30,
    'New persisted queries one caller may register per minute (across replicas with `CACHE_URL`); past it the operation still runs and nothing is stored. 0: no registration.',
  ),
  PERSISTED_MAX_BYTES: int(
    0,
    4_294_967_296,
    16_777_216,
    'Bytes of registered persisted queries kept (in Redis for the whole cluster, and in each process); the least recently used leave first.',
  ),
  LOG_LEVEL: {
    schema: oneOf(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')} (got {value})`),
    default: 'info',
    description: 'pino level.',
  } satisfies Setting<(typeof LOG_LEVELS)[number]>,
  BENCH_FEATURES_OFF: {
    schema: z.string().transform((value, ctx) => {
      const names = value
        .split(',')
        .map((entry) => entry.trim().toLowerCase())
        .filter(Boolean);
      for (const name of names) {
        if (!(BENCH_FEATURES as readonly string[]).includes(name)) {
          ctx.addIssue({
            code: 'custom',
            message: `must list some of ${BENCH_FEATURES.join(', ')} (got {value})`,
          });
          return z.NEVER;
        }
      }
      return new Set(names as BenchFeature[]) as ReadonlySet<BenchFeature>;
    }),
    default: new Set<BenchFeature>(),
    shownDefault: 'unset',
    description: `For the benchmark only (\`npm run bench -- --features\`), refused in production: comma-separated production features to turn off, to measure what each costs (${BENCH_FEATURES.join(', ')}).`,
  } satisfies Setting<ReadonlySet<BenchFeature>>,
  LOG_REDACT_PATHS: {
    schema: list,
    default: [],
    shownDefault: 'unset',
    description: 'Extra comma-separated pino paths to redact on top of the built-in list.',
  } satisfies Setting<string[]>,
  SHUTDOWN_DRAIN_MS: {
    schema: integer(0, 300_000),
    shownDefault: '`5000` in production, `0` otherwise',
    description:
      'On SIGTERM/SIGINT, how long `/readyz` answers 503 while everything else is still served, before the listener closes: longer than the period of every readiness probe (a load balancer, Kubernetes) that must see the 503 first.',
  } satisfies Setting<number>,
  SHUTDOWN_GRACE_MS: int(
    0,
    300_000,
    10_000,
    'Once the listener is closed (after the drain), how long answers in flight may take to finish and streams to end before the connections still open are cut.',
  ),
  SANDBOX_SLOW_MS: int(
    0,
    600_000,
    10_000,
    "Delay of the sandbox's slow references (`NT-SLOW001`), in sandbox mode and `npm run sandbox`.",
  ),
  SANDBOX_PAYMENT_PORT: int(0, 65535, 4010, 'Port of the payment simulator of `npm run sandbox`.'),
  SANDBOX_KYC_PORT: int(0, 65535, 4020, 'Port of the KYC simulator of `npm run sandbox`.'),
} as const;

export type SettingName = keyof typeof SETTINGS;

type Declared = typeof SETTINGS;
type ValueOf<K extends SettingName> = Declared[K] extends Setting<infer T> ? T : never;
/** What reading a variable gives: its value, or its default, or undefined when it has none. */
export type SettingValue<K extends SettingName> = Declared[K] extends { default: unknown }
  ? ValueOf<K>
  : ValueOf<K> | undefined;

/** A variable that is set but unusable. `variable` names it; the message never holds a secret. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

/** The environment as read (process.env, or a test's). */
export type Env = Record<string, string | undefined>;

/** Settings by name, as text: what tests and tools hand to `loadConfig` (names checked). */
export type SettingsEnv = Partial<Record<SettingName, string>>;

/** The trimmed text of a variable, undefined when unset or empty. */
function settingText(env: Env, name: SettingName): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** The text as an error may quote it: in quotes, or hidden for a secret. */
function quoted(name: SettingName, value: string): string {
  const setting: Setting<unknown> = SETTINGS[name];
  return setting.secret ? '(value hidden)' : JSON.stringify(value);
}

/**
 * Reads one declared variable through its schema: its value, its default when unset, or
 * undefined when it has neither.
 * @throws ConfigError with the schema's first message.
 */
export function readSetting<K extends SettingName>(env: Env, name: K): SettingValue<K> {
  const setting: Setting<unknown> = SETTINGS[name];
  const value = settingText(env, name);
  if (value === undefined) return setting.default as SettingValue<K>;
  const parsed = setting.schema.safeParse(value);
  if (parsed.success) return parsed.data as SettingValue<K>;
  const message = parsed.error.issues[0]?.message ?? 'is not valid';
  const shown = message.replace('{value}', quoted(name, value));
  throw new ConfigError(name, setting.secret ? shown : shown.replace('{text}', value));
}

/** The table of docs/api.md, one row per variable, its columns aligned as the formatter does. */
export function settingsTable(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = Object.entries(SETTINGS).map(([name, entry]) => {
    const setting: Setting<unknown> = entry;
    const fallback =
      setting.shownDefault ??
      (Array.isArray(setting.default) ? 'unset' : `\`${String(setting.default)}\``);
    const description = `${setting.description}${setting.secret ? ' Secret.' : ''}`;
    return [`\`${name}\``, cell(fallback), cell(description)];
  });
  return markdownTable(['Variable', 'Default', 'Meaning'], rows);
}

/** A Markdown table of docs/, its columns aligned as the formatter aligns them. */
export function markdownTable(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((text, column) => text.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join(
    '\n',
  );
}

/**
 * The standard OpenTelemetry variables the SDK reads for the gateway's traces (operations.md,
 * "Tracing"): not settings of the gateway's own, but names a typo check must know.
 */
export const OTEL_VARIABLES: readonly string[] = [
  'OTEL_SDK_DISABLED',
  'OTEL_CONFIG_FILE',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_EXPORTER',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_PROPAGATORS',
  'OTEL_LOG_LEVEL',
  'OTEL_NODE_RESOURCE_DETECTORS',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  'OTEL_EXPORTER_OTLP_COMPRESSION',
  'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_EVENT_COUNT_LIMIT',
  'OTEL_SPAN_LINK_COUNT_LIMIT',
];

/**
 * Edit distance with adjacent transpositions (optimal string alignment), or `limit + 1` as soon
 * as it must exceed `limit`.
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (before[j - 2] ?? 0) + 1);
      }
      current[j] = value;
      best = Math.min(best, value);
    }
    if (best > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? limit + 1;
}

/** The first word of a variable's name (`CACHE` of `CACHE_URL`, `PORT` of `PORT`). */
const prefixOf = (name: string) => name.split('_', 1)[0] ?? name;

/**
 * Variables of the environment that are not settings but one small typo away from one
 * (`CACHE_ULR` → `CACHE_URL`, `AUTH_JWT_SECRETS` → `AUTH_JWT_SECRET`): at most one edit (a
 * letter added, dropped, changed, or two swapped) from a name of up to 8 letters, two from a
 * longer one. Only names that look like ours are considered: upper case, and starting with a
 * settings' first word (`CACHE_`, `AUTH_`, `OTEL_`…) or a swap of two letters away from a
 * setting (`PROT`), so `PATH`, `HOME`, `HOSTNAME` or `NODE_OPTIONS` raise nothing. Names only:
 * no value is read.
 */
export function closeToSettings(env: Env): Array<{ variable: string; setting: string }> {
  const known = [...Object.keys(SETTINGS), ...OTEL_VARIABLES];
  const names = new Set(known);
  const prefixes = new Set(known.map(prefixOf));
  const found: Array<{ variable: string; setting: string }> = [];
  for (const variable of Object.keys(env)) {
    if (names.has(variable) || !/^[A-Z][A-Z0-9_]*$/.test(variable)) continue;
    const ours = prefixes.has(prefixOf(variable));
    let closest: { setting: string; distance: number } | undefined;
    for (const setting of known) {
      const limit = ours ? (setting.length > 8 ? 2 : 1) : 1;
      const distance = editDistance(variable, setting, limit);
      if (distance > limit) continue;
      // Outside our prefixes only a swap of two letters counts (PROT for PORT, not PATH).
      if (!ours && !isSwap(variable, setting)) continue;
      if (!closest || distance < closest.distance) closest = { setting, distance };
    }
    if (closest) found.push({ variable, setting: closest.setting });
  }
  return found;
}

/** Whether `a` is `b` with two adjacent letters swapped. */
function isSwap(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const at = [...a].findIndex((char, i) => char !== b[i]);
  return (
    at >= 0 &&
    at + 1 < a.length &&
    a[at] === b[at + 1] &&
    a[at + 1] === b[at] &&
    a.slice(at + 2) === b.slice(at + 2)
  );
}
