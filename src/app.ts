/**
 * The composition root: upstream clients → cache → sources → gateway, from validated settings.
 * main.ts and the tests both build gateways through here.
 */
import { readFileSync } from 'node:fs';
import { trace } from '@opentelemetry/api';
import { Counter, Gauge, Histogram } from 'prom-client';
import { type Authenticator, createAuthenticator, signToken } from './auth.ts';
import { LeaseFlightLock } from './cache/flight.ts';
import { Sealer } from './cache/seal.ts';
import { createSources } from './cache/sources.ts';
import { type CacheObserver, RecordCache } from './cache/store.ts';
import type {
  AuthConfig,
  GatewayConfig,
  KycUpstreamConfig,
  PaymentUpstreamConfig,
  RateLimitConfig,
} from './config.ts';
import { createPersistedStore, trustedOperationNames } from './graphql/persisted.ts';
import { perCallerKind, type RateLimiter, UNLIMITED } from './http/rate-limit.ts';
import type { LiveDeps, LiveStatusHub } from './live/hub.ts';
import { LiveMessages } from './live/messages.ts';
import { LiveHub } from './live/status-hub.ts';
import { isTxRef } from './model/input.ts';
import { ClusterMetrics } from './observability/cluster-metrics.ts';
import { createLogger, type Logger } from './observability/logger.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import { type ThrottledWarn, throttledWarn } from './observability/throttled-log.ts';
import type { Tracing } from './observability/tracing.ts';
import {
  CLAIMS_LEGACY_LEDGER,
  CLAIMS_NAMESPACE,
  type ClaimStore,
  MemoryClaimStore,
  RedisClaimStore,
} from './payments/claims.ts';
import { PaymentConfirmations } from './payments/confirmation.ts';
import { createGateway, type Gateway } from './server.ts';
import { type LedgerReport, RedisLedger } from './state/claims.ts';
import { memoryState, redisState, type SharedState } from './state/index.ts';
import type { TokenBuckets } from './state/quota.ts';
import { RedisConnection } from './state/redis.ts';
import { RedisSseReservations } from './state/sse-reservations.ts';
import { CallerShare } from './upstream/caller-share.ts';
import { KycClient, PaymentClient } from './upstream/clients.ts';
import type { UpstreamObserver } from './upstream/http.ts';
import { createKycPageHandler, type KycPageHandler } from './web/kycPage.ts';
import { createWebhookHandler } from './webhooks/handler.ts';
import { createRefresher } from './webhooks/refresh.ts';
import { createReplayGuard } from './webhooks/replay.ts';

export const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

export interface AppInputs {
  config: GatewayConfig;
  /** The upstreams to call (from the settings, or the in-process sandbox's addresses). */
  payment: PaymentUpstreamConfig;
  kyc: KycUpstreamConfig;
  auth: AuthConfig;
  /** Headers GraphiQL starts with (the sandbox's ready token). */
  graphiqlHeaders?: Record<string, string>;
  /** Builds the cache instead of the configured one (tests, Redis). */
  cache?: (observe: CacheObserver) => RecordCache;
  /** A logger to use instead of one on stdout (tests capture lines). */
  logger?: Logger;
  /**
   * What `/kyc` needs to sign short-lived demo end-user tokens: an HS256 secret made for this
   * run in sandbox mode (main.ts) or a test's, never an operator's secret; the sandbox's demo
   * payments to list in the token; and a new pending payment of the sandbox's for each token.
   */
  kycPageDemo?: KycPageDemo;
  /** The process's OpenTelemetry tracing (main.ts starts it from the OTEL_* variables). */
  tracing?: Tracing;
}

export interface KycPageDemo {
  secret: string;
  txRefs: readonly string[];
  pendingTxRef: () => string;
}

const BREAKER_GAUGE = { closed: 0, open: 1, half_open: 2 } as const;

/** Upstream events → metrics and log lines (no URL, body or credential in either). */
function upstreamObserver(
  metrics: GatewayMetrics,
  logger: Logger,
  traced: boolean,
): UpstreamObserver {
  return {
    attempt: ({ upstream, outcome, status, durationMs }) => {
      metrics.upstreamCalls.inc({ upstream, outcome });
      metrics.upstreamLatency.observe({ upstream, outcome }, durationMs / 1000);
      if (outcome !== 'ok') logger.warn({ upstream, outcome, status }, 'upstream call failed');
    },
    retry: ({ upstream, delayMs, after }) => {
      metrics.upstreamRetries.inc({ upstream });
      if (traced) trace.getActiveSpan()?.addEvent('upstream retry', { upstream, after, delayMs });
      logger.debug({ upstream, delayMs: Math.round(delayMs), after }, 'retrying upstream call');
    },
    rejected: ({ upstream, reason }) => metrics.upstreamRejected.inc({ upstream, reason }),
    breaker: ({ upstream, state }) => {
      metrics.breakerState.set({ upstream }, BREAKER_GAUGE[state]);
      logger.warn({ upstream, state }, 'upstream circuit changed state');
    },
  };
}

// Long enough to verify a demo user and watch a payment settle; short for a token in a page.
const DEMO_TOKEN_LIFETIME = '30m';

/**
 * The Redis connection of `CACHE_URL`, reporting to metrics and (throttled) logs. Nothing
 * reported names the URL (it may hold a password), a key or a value.
 */
function connectRedis(
  config: GatewayConfig,
  cluster: ClusterMetrics,
  logger: Logger,
  warn: ThrottledWarn,
): RedisConnection | undefined {
  const { url, connectTimeoutMs, commandTimeoutMs, keyPrefix } = config.cache;
  if (url === undefined) return undefined;
  cluster.redisUp?.set(0);
  return new RedisConnection(
    { url, connectTimeoutMs, commandTimeoutMs, keyPrefix },
    {
      state: (up) => {
        cluster.redisUp?.set(up ? 1 : 0);
        if (up) logger.info('redis connected: cache, locks, live status and rate limits shared');
        else {
          logger.warn(
            'redis unreachable: serving from the upstreams, each replica on its own, until it is back',
          );
        }
      },
      error: (component) => {
        cluster.redisErrors.inc({ component });
        warn(`redis:${component}`, { component }, 'redis operation failed; served without it');
      },
    },
  );
}

/** The live hub, and the rate limiter: shared through Redis when there is one. */
function clusterParts(
  config: GatewayConfig,
  state: SharedState,
  live: LiveDeps,
  messages: LiveMessages,
): { live: LiveStatusHub; rateLimiter: RateLimiter } {
  const buckets = (rate: RateLimitConfig): TokenBuckets =>
    rate.rps === 0 ? UNLIMITED : state.buckets(rate);
  return {
    live: new LiveHub(live, state, messages),
    rateLimiter: perCallerKind({
      endUser: buckets(config.rateLimit),
      service: buckets(config.rateLimit.service),
    }),
  };
}

/**
 * Where `confirmPayment` keeps its claims: Redis, shared by the replicas and sealed as records
 * are, its ledger and durability checked at start and at every reconnection (and logged); or,
 * without it, this process's memory (said at start), refused in production unless allowed.
 */
function claimStore(
  config: GatewayConfig,
  redis: RedisConnection | undefined,
  logger: Logger,
): ClaimStore {
  const retentionMs = config.confirmationRetentionDays * 86_400_000;
  if (redis) {
    const { encryption } = config.cache;
    const store = new RedisClaimStore(
      new RedisLedger(redis, CLAIMS_NAMESPACE, CLAIMS_LEGACY_LEDGER),
      retentionMs,
      encryption && new Sealer(encryption),
      () => logger.error(LEDGER_LOST_LINE),
    );
    redis.onReady(() => {
      store.inspect().then(
        (report) => logLedger(logger, report),
        () => logger.warn('payment confirmations: the claims ledger could not be checked now'),
      );
    });
    return store;
  }
  const refuse = config.production && !config.allowMemoryClaims;
  if (refuse) {
    logger.error(
      "payment confirmations: refused — no CACHE_URL, and claims kept in this process's memory would be forgotten on restart; set CACHE_URL (a durable Redis) or ALLOW_MEMORY_CLAIMS=true",
    );
  } else {
    logger.warn(
      "payment confirmations: claims are kept in this process's memory (no CACHE_URL): one replica only, forgotten on restart",
    );
  }
  return new MemoryClaimStore(retentionMs, { refuse });
}

const LEDGER_LOST_LINE =
  'payment confirmations: SUSPENDED — the claims store was emptied or replaced while the gateway ran; nothing is confirmed until an operator runs `npm run claims:acknowledge` (see docs/payments.md)';

/** Says what the claims ledger and Redis's durability look like: loudly when claims can be lost. */
function logLedger(logger: Logger, report: LedgerReport): void {
  const { ledger, durability } = report;
  // A loss is told by the store's `onLost`, once.
  if (ledger === 'acknowledged') {
    logger.warn(
      { ledger },
      'payment confirmations: a lost claims ledger was acknowledged; confirming again',
    );
  }
  if (!durability.readable) {
    logger.warn(
      { reason: durability.reason },
      'payment confirmations: Redis refused CONFIG GET, so its persistence cannot be checked; make sure it keeps an append-only file and evicts nothing',
    );
    return;
  }
  const { appendonly, appendfsync, maxmemoryPolicy, risks } = durability;
  const fields = { ledger, appendonly, appendfsync, maxmemoryPolicy };
  if (risks.length > 0) {
    logger.error(
      { ...fields, risks },
      'payment confirmations: this Redis can lose claims (a payment could then confirm a second order); run it with appendonly yes and maxmemory-policy noeviction',
    );
  } else {
    logger.info(
      fields,
      'payment confirmations: claims kept in Redis with an append-only file and no eviction',
    );
  }
}

/**
 * Benchmark only (`BENCH_FEATURES_OFF=metrics`, refused in production by config.ts): every
 * metric of the request path observes nothing, to measure what observing costs.
 */
function silenceMetrics(metrics: GatewayMetrics): void {
  const nothing = (): void => {};
  for (const metric of Object.values(metrics)) {
    if (metric instanceof Counter || metric instanceof Gauge || metric instanceof Histogram) {
      Object.assign(metric, { inc: nothing, dec: nothing, set: nothing, observe: nothing });
    }
  }
}

/** Builds a gateway from settings. */
export function createApp(inputs: AppInputs): Gateway {
  return buildApp(inputs).gateway;
}

/**
 * Builds a gateway and, with `CACHE_URL`, waits for its first Redis connection (at most
 * `CACHE_CONNECT_TIMEOUT_MS`), so that the first requests already share the cache. A Redis that
 * does not answer does not stop the start: the gateway serves without it (not ready) meanwhile.
 */
export async function startApp(inputs: AppInputs): Promise<Gateway> {
  const { gateway, redis } = buildApp(inputs);
  if (redis && !(await redis.connected(inputs.config.cache.connectTimeoutMs))) {
    gateway.logger.warn('redis did not answer at start: serving without it until it does');
  }
  return gateway;
}

function buildApp(inputs: AppInputs): { gateway: Gateway; redis: RedisConnection | undefined } {
  const { config } = inputs;
  const metrics = new GatewayMetrics();
  if (config.benchNoMetrics) silenceMetrics(metrics);
  // The project's own operations always have their label (observability/metrics.ts).
  metrics.trustOperations(trustedOperationNames());
  const logger = inputs.logger ?? createLogger(config.log);
  // With tracing off, nothing on the hot path looks for a span.
  const { tracing } = inputs;
  const observer = upstreamObserver(metrics, logger, tracing !== undefined);
  const zone = config.upstreamTimeZone;
  const payment = new PaymentClient(inputs.payment, config.upstream, observer, zone, tracing);
  const kyc = new KycClient(inputs.kyc, config.upstream, observer, zone, tracing);
  const warn = throttledWarn(logger);
  const cluster = new ClusterMetrics(metrics, config.cache.url !== undefined);
  const redis = inputs.cache ? undefined : connectRedis(config, cluster, logger, warn);
  // What the replicas share, chosen here once: Redis with CACHE_URL, else this process alone.
  const state = redis ? redisState(redis) : memoryState();
  const observeCache: CacheObserver = ({ kind, outcome }) => {
    metrics.cacheEvents.inc({ kind, outcome });
    if (tracing) trace.getActiveSpan()?.addEvent('cache', { kind, outcome });
    if (outcome === 'unreadable') {
      warn(
        `cache-unreadable:${kind}`,
        { kind },
        'cache value did not open (altered, put back, or sealed with another key): not served, replaced by a fresh read',
      );
    }
    if (outcome === 'error') {
      if (state.shared && kind !== 'store') cluster.redisErrors.inc({ component: 'cache' });
      // Throttled: with the store down this would otherwise be one line per request.
      warn(`cache:${kind}`, { kind }, 'cache store failed; serving without it');
    }
  };
  const cache = inputs.cache
    ? inputs.cache(observeCache)
    : new RecordCache(
        state.records(config.cache, config.cache.encryption && new Sealer(config.cache.encryption)),
        observeCache,
      );
  const sources = createSources({
    payment,
    kyc,
    cache,
    policy: config.cache,
    businessSlug: inputs.kyc.businessSlug,
    ...(state.shared && {
      flightLock: new LeaseFlightLock(state, {
        // Held a little longer than one upstream read may take; waited for as long as one.
        holdMs: config.upstream.timeoutMs + 1000,
        waitMs: config.upstream.timeoutMs,
        pollMs: 25,
      }),
    }),
  });
  // Every message between replicas goes through this codec (sealed with the cache key).
  const messages = new LiveMessages(config.cache.encryption, (reason) =>
    cluster.liveRejected.inc({ reason }),
  );
  const { live, rateLimiter } = clusterParts(
    config,
    state,
    { sources, settings: config.live, observer: cluster.liveObserver() },
    messages,
  );
  const confirmations = new PaymentConfirmations(claimStore(config, redis, logger), (outcome) =>
    metrics.paymentConfirmations.inc({ outcome }),
  );
  const authenticate: Authenticator = createAuthenticator(inputs.auth);
  // graphql-sse's reservations relay operations and their answers: sealed, or not shared at all.
  const { encryption } = config.cache;
  const sseReservations =
    redis && encryption
      ? new RedisSseReservations(redis, state.channels, encryption, messages)
      : undefined;
  if (redis && !encryption) {
    logger.warn(
      "graphql-sse single-connection reservations stay in the replica that made them (CACHE_ENCRYPTION_KEY unset): a balancer must keep each client's requests on one replica",
    );
  }
  const hooks = config.webhooks;
  const webhooks =
    hooks.secrets.length > 0 &&
    createWebhookHandler({
      secrets: hooks.secrets,
      toleranceSeconds: hooks.toleranceSeconds,
      sources,
      live,
      // Remembered as long as a signed time may still be accepted: twice the tolerance.
      replay: createReplayGuard(2 * hooks.toleranceSeconds, state),
      refresher: createRefresher(config.upstream.timeoutMs + 1000, state),
      metrics,
      logger,
    });
  const gateway = createGateway({
    hardening: {
      limits: config.limits,
      production: config.production,
      introspection: config.introspection,
      trustedDocuments: config.trustedDocuments,
    },
    metricsOnApiPort: config.metricsPort === undefined,
    corsOrigins: config.corsOrigins,
    corsAllowedHeaders: config.corsAllowedHeaders,
    connections: config.connections,
    rateLimiter,
    persistedStore: createPersistedStore({
      bounds: config.persisted,
      state,
      ...(config.cache.encryption && { encryption: config.cache.encryption }),
    }),
    ...(!config.callerShare.benchOff && {
      callerShare: new CallerShare(
        {
          endUser: config.callerShare.maxConcurrent,
          service: config.callerShare.serviceMaxConcurrent,
        },
        config.callerShare.maxQueued,
      ),
    }),
    live,
    confirmations,
    ...(webhooks && { webhooks }),
    ...(sseReservations && { sseReservations }),
    sources,
    authenticate,
    metrics,
    logger,
    ...(tracing && { tracing }),
    readiness: async () => {
      const reasons: string[] = [];
      if (!(await cache.ping())) reasons.push('cache store not answering');
      if (payment.breakerState === 'open' && kyc.breakerState === 'open') {
        reasons.push('both upstream circuits are open');
      }
      return { ready: reasons.length === 0, reasons };
    },
    settings: {
      upstreamTimeZone: config.upstreamTimeZone,
      sdk: {
        scriptUrl: inputs.kyc.sdkScriptUrl,
        publicKey: inputs.kyc.publicKey,
        businessSlug: inputs.kyc.businessSlug,
      },
      maxBatchSize: config.maxBatchSize,
      maxRecordsPerRequest: config.maxRecordsPerRequest,
      sandbox: config.sandbox,
      version: VERSION,
    },
    ...(config.kycPage && { kycPage: kycPage(inputs) }),
    graphiql: config.graphiql
      ? { ...(inputs.graphiqlHeaders && { headers: inputs.graphiqlHeaders }) }
      : false,
    close: async () => {
      // Pollers first (they release their Redis locks), the connection to Redis last.
      await live.close();
      await Promise.allSettled([payment.close(), kyc.close()]);
      await redis?.close();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    },
  });
  return { gateway, redis };
}

function kycPage(inputs: AppInputs): KycPageHandler {
  // Demo tokens never in production, whatever secret is handed in.
  const demo = inputs.config.production ? undefined : inputs.kycPageDemo;
  return createKycPageHandler({
    sdkScriptUrl: inputs.kyc.sdkScriptUrl,
    ...(demo && {
      // An end user's token, no scope: its own KYC (sub), and only the payments listed in it,
      // as a merchant's backend would list the end user's own.
      demoToken: async (userRef: string) => {
        const pendingTxRef = demo.pendingTxRef();
        const txRefs = [...demo.txRefs.filter(isTxRef), pendingTxRef];
        const token = await signToken(demo.secret, { sub: userRef, txRefs }, DEMO_TOKEN_LIFETIME);
        return { token, txRefs, pendingTxRef };
      },
    }),
  });
}
