/**
 * The composition root: upstream clients → cache → sources → gateway, from validated settings.
 * main.ts and the tests both build gateways through here.
 */
import { readFileSync } from 'node:fs';
import { trace } from '@opentelemetry/api';
import { Counter, Gauge, Histogram } from 'prom-client';
import { type Authenticator, createAuthenticator, signToken } from './auth.ts';
import type { BusinessAccount } from './businesses/accounts.ts';
import { Businesses, type BusinessRuntime, SINGLE_BUSINESS_ID } from './businesses/registry.ts';
import { LeaseFlightLock } from './cache/flight.ts';
import { Sealer } from './cache/seal.ts';
import { createSources, type RecordSources } from './cache/sources.ts';
import { type CacheObserver, RecordCache } from './cache/store.ts';
import type {
  AuthConfig,
  GatewayConfig,
  KycUpstreamConfig,
  PaymentUpstreamConfig,
  RateLimitConfig,
} from './config.ts';
import type { ContextDeps, ResolverSettings } from './context.ts';
import { createPersistedStore, trustedOperationNames } from './graphql/persisted.ts';
import { perCallerKind, type RateLimiter, UNLIMITED } from './http/rate-limit.ts';
import { LiveMessages } from './live/messages.ts';
import { LiveHub } from './live/status-hub.ts';
import { isTxRef } from './model/input.ts';
import { ClusterMetrics } from './observability/cluster-metrics.ts';
import { createLogger, type Logger } from './observability/logger.ts';
import { type BusinessLabel, GatewayMetrics, NO_BUSINESS } from './observability/metrics.ts';
import { type ThrottledWarn, throttledWarn } from './observability/throttled-log.ts';
import type { Tracing } from './observability/tracing.ts';
import {
  CLAIMS_LEGACY_LEDGER,
  CLAIMS_NAMESPACE,
  CLAIMS_SINGLE_BUSINESS_LEDGER,
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
import { within } from './state/scope.ts';
import { RedisSseReservations } from './state/sse-reservations.ts';
import { CallerShare } from './upstream/caller-share.ts';
import { KycClient, PaymentClient } from './upstream/clients.ts';
import type { UpstreamObserver } from './upstream/http.ts';
import { createKycPageHandler, type KycPageHandler } from './web/kycPage.ts';
import { createWebhookHandler, routeWebhooks, type WebhookHandler } from './webhooks/handler.ts';
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
  /**
   * Several businesses (`BUSINESSES_FILE`, or the sandbox's demo ones): each with its own
   * credentials, which those of `payment` and `kyc` then are not. Absent: one business, from
   * `payment`, `kyc` and the webhook settings.
   */
  businesses?: readonly BusinessAccount[];
}

export interface KycPageDemo {
  secret: string;
  txRefs: readonly string[];
  pendingTxRef: () => string;
  /** With several businesses: the business the demo tokens name, and the claim that names it. */
  business?: { claim: string; id: string };
}

const BREAKER_GAUGE = { closed: 0, open: 1, half_open: 2 } as const;

/**
 * One business's upstream events → metrics (under its `business` label) and log lines (its
 * logger's: with several businesses, each line names it). No URL, body or credential in either.
 */
function upstreamObserver(
  metrics: GatewayMetrics,
  logger: Logger,
  traced: boolean,
  business: BusinessLabel,
): UpstreamObserver {
  // One label object per upstream and outcome, made once: every upstream call is observed.
  const callLabels = new Map<string, Map<string, Readonly<Record<string, string>>>>();
  const labelsOf = (upstream: string, outcome: string): Readonly<Record<string, string>> => {
    let byOutcome = callLabels.get(upstream);
    if (!byOutcome) {
      byOutcome = new Map();
      callLabels.set(upstream, byOutcome);
    }
    let labels = byOutcome.get(outcome);
    if (!labels) {
      labels = Object.freeze({ upstream, outcome, ...business });
      byOutcome.set(outcome, labels);
    }
    return labels;
  };
  return {
    attempt: ({ upstream, outcome, status, durationMs }) => {
      const labels = labelsOf(upstream, outcome);
      // Also the count of upstream calls (metrics.ts copies it from this histogram).
      metrics.upstreamCall(labels, durationMs / 1000);
      if (outcome !== 'ok') logger.warn({ upstream, outcome, status }, 'upstream call failed');
    },
    retry: ({ upstream, delayMs, after }) => {
      metrics.upstreamRetries.inc({ upstream, ...business });
      if (traced) trace.getActiveSpan()?.addEvent('upstream retry', { upstream, after, delayMs });
      logger.debug({ upstream, delayMs: Math.round(delayMs), after }, 'retrying upstream call');
    },
    rejected: ({ upstream, reason }) =>
      metrics.upstreamRejected.inc({ upstream, reason, ...business }),
    breaker: ({ upstream, state }) => {
      metrics.breakerState.set({ upstream, ...business }, BREAKER_GAUGE[state]);
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

/**
 * Where `confirmPayment` keeps its claims, one store per business: Redis, shared by the replicas
 * and sealed as records are, each business's ledger and Redis's durability checked at start and
 * at every reconnection (and logged); or, without it, this process's memory (said once at start),
 * refused in production unless allowed.
 */
function claimStores(
  config: GatewayConfig,
  redis: RedisConnection | undefined,
  logger: Logger,
): (business: string, namespace: string | undefined) => ClaimStore {
  const retentionMs = config.confirmationRetentionDays * 86_400_000;
  if (redis) {
    const { encryption } = config.cache;
    const stores = new Map<string, RedisClaimStore>();
    redis.onReady(() => {
      // Redis's durability is said once; each business's ledger when it is not simply in order.
      let first = true;
      for (const [business, store] of stores) {
        const said = first;
        first = false;
        store.inspect().then(
          (report) => logLedger(logger, report, said, business),
          () =>
            logger.warn(
              { business },
              'payment confirmations: the claims ledger could not be checked now',
            ),
        );
      }
    });
    return (business, namespace) => {
      // The single business keeps the key layout it always had (and the previous one's ledger);
      // each of several has its own, under its namespace.
      const store = new RedisClaimStore(
        namespace === undefined
          ? new RedisLedger(redis, CLAIMS_NAMESPACE, CLAIMS_LEGACY_LEDGER)
          : new RedisLedger(redis, [namespace, ...CLAIMS_NAMESPACE], CLAIMS_SINGLE_BUSINESS_LEDGER),
        retentionMs,
        encryption && new Sealer(encryption),
        () => logger.error({ business }, LEDGER_LOST_LINE),
      );
      stores.set(business, store);
      return store;
    };
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
  return () => new MemoryClaimStore(retentionMs, { refuse });
}

const LEDGER_LOST_LINE =
  'payment confirmations: SUSPENDED — the claims store was emptied or replaced while the gateway ran; nothing is confirmed until an operator runs `npm run claims:acknowledge` (with several businesses: `-- --business <id>`; see docs/payments.md)';

/**
 * Says what a business's claims ledger and (`durability`) Redis's durability look like: loudly
 * when claims can be lost.
 */
function logLedger(
  logger: Logger,
  report: LedgerReport,
  durabilityToo: boolean,
  business: string,
): void {
  const { ledger, durability } = report;
  // A loss is told by the store's `onLost`, once.
  if (ledger === 'acknowledged') {
    logger.warn(
      { ledger, business },
      'payment confirmations: a lost claims ledger was acknowledged; confirming again',
    );
  }
  if (!durabilityToo) return;
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
  Object.assign(metrics, {
    cacheEvent: nothing,
    upstreamCall: nothing,
    document: nothing,
    request: nothing,
    observeDuration: nothing,
    requestStarted: nothing,
    requestEnded: nothing,
  });
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

/** The namespace of a business's keys when several are served (the one business has none). */
export function businessNamespace(id: string): string {
  return `biz:${id}`;
}

/** What every business of a gateway is built from. */
interface BusinessParts {
  inputs: AppInputs;
  /** The state of every replica, of which each of several businesses sees its own namespace. */
  state: SharedState;
  metrics: GatewayMetrics;
  logger: Logger;
  /** Whether a span may be looked for (tracing on). */
  traced: boolean;
  observeCache: CacheObserver;
  messages: LiveMessages;
  cluster: ClusterMetrics;
  claims: (business: string, namespace: string | undefined) => ClaimStore;
  callerShare: CallerShare | undefined;
  /** The resolver settings every business shares (its own public KYC values added). */
  settings: Omit<ResolverSettings, 'sdk'>;
  /** Clients replaced by an update, closed once their calls have had their time. */
  retired: Set<{ close(): Promise<void> }>;
  /** The gateway is closing (not a reload): each business's series stay for the last scrape. */
  closing: boolean;
}

/** A business with its own health, for readiness. */
interface ServedBusiness extends BusinessRuntime {
  /** Both of its upstream circuits are open. */
  upstreamsDown(): boolean;
  /** Its record store answers. */
  ping(): Promise<boolean>;
}

/**
 * One business: its upstream clients (its credentials and slug), and over its view of the state
 * its records, single flight, live status and claims; its public KYC values and its webhooks.
 * `several`: its keys are under its namespace.
 */
function buildBusiness(account: BusinessAccount, several: boolean, parts: BusinessParts) {
  const { inputs, metrics } = parts;
  const { config, tracing } = inputs;
  const namespace = several ? businessNamespace(account.id) : undefined;
  const state = namespace === undefined ? parts.state : within(parts.state, namespace);
  // With several: its metrics carry its id as the `business` label, its log lines as a field.
  const label: BusinessLabel = several ? { business: account.id } : NO_BUSINESS;
  const logger = several ? parts.logger.child(label) : parts.logger;
  const observer = upstreamObserver(metrics, logger, parts.traced, label);
  metrics.upstreamsClosed(label);
  const clientsOf = (of: BusinessAccount) => ({
    account: of,
    payment: new PaymentClient(
      { baseUrl: inputs.payment.baseUrl, accessToken: of.paymentAccessToken },
      config.upstream,
      observer,
      config.upstreamTimeZone,
      tracing,
    ),
    kyc: new KycClient(
      {
        ...inputs.kyc,
        secretKey: of.kycSecretKey,
        publicKey: of.kycPublicKey,
        businessSlug: of.kycBusinessSlug,
      },
      config.upstream,
      observer,
      config.upstreamTimeZone,
      tracing,
    ),
  });
  let current = clientsOf(account);
  const cache = inputs.cache
    ? inputs.cache(parts.observeCache)
    : new RecordCache(
        state.records(config.cache, config.cache.encryption && new Sealer(config.cache.encryption)),
        parts.observeCache,
      );
  const sources: RecordSources = createSources({
    // Through the current clients: an update's credentials serve the next call.
    payment: {
      getTransaction: (txRef, waiting, since, then) =>
        current.payment.getTransaction(txRef, waiting, since, then),
    },
    kyc: {
      getUser: (userRef, waiting, since, then) =>
        current.kyc.getUser(userRef, waiting, since, then),
    },
    cache,
    policy: config.cache,
    get businessSlug() {
      return current.account.kycBusinessSlug;
    },
    ...(state.shared && {
      flightLock: new LeaseFlightLock(state, {
        // Held a little longer than one upstream read may take; waited for as long as one.
        holdMs: config.upstream.timeoutMs + 1000,
        waitMs: config.upstream.timeoutMs,
        pollMs: 25,
      }),
    }),
  });
  const live = new LiveHub(
    { sources, settings: config.live, observer: parts.cluster.liveObserver(label) },
    state,
    parts.messages,
  );
  const confirmations = new PaymentConfirmations(parts.claims(account.id, namespace), (outcome) =>
    metrics.paymentConfirmations.inc({ outcome, ...label }),
  );
  const { toleranceSeconds } = config.webhooks;
  // Remembered as long as a signed time may still be accepted: twice the tolerance.
  const replay = createReplayGuard(2 * toleranceSeconds, state);
  const refresher = createRefresher(config.upstream.timeoutMs + 1000, state);
  const webhooksOf = (of: BusinessAccount): WebhookHandler | undefined =>
    of.webhookSecrets.length === 0
      ? undefined
      : createWebhookHandler({
          secrets: of.webhookSecrets,
          toleranceSeconds,
          sources,
          live,
          replay,
          refresher,
          metrics,
          label,
          logger,
        });
  const contextOf = (of: BusinessAccount): ContextDeps => ({
    sources,
    settings: {
      ...parts.settings,
      sdk: {
        scriptUrl: inputs.kyc.sdkScriptUrl,
        publicKey: of.kycPublicKey,
        businessSlug: of.kycBusinessSlug,
      },
    },
    live,
    confirmations,
    ...(parts.callerShare && { callerShare: parts.callerShare }),
  });
  let context = contextOf(account);
  let webhooks = webhooksOf(account);
  const removed = new AbortController();
  const retire = (clients: typeof current): void => {
    for (const client of [clients.payment, clients.kyc]) {
      parts.retired.add(client);
      // A call under way keeps its client for its whole time budget, retries included.
      setTimeout(() => {
        parts.retired.delete(client);
        void client.close();
      }, config.upstream.timeoutMs + 1000).unref();
    }
  };
  const business: ServedBusiness = {
    id: account.id,
    get context() {
      return context;
    },
    get webhooks() {
      return webhooks;
    },
    removed: removed.signal,
    update(next) {
      retire(current);
      current = clientsOf(next);
      metrics.upstreamsClosed(label);
      context = contextOf(next);
      webhooks = webhooksOf(next);
    },
    async close(gone) {
      if (gone) removed.abort();
      // Pollers first (they release their Redis locks).
      await live.close();
      await Promise.allSettled([current.payment.close(), current.kyc.close()]);
      // Its series go with it (a gateway closing keeps its own to the last scrape).
      if (several && !parts.closing) await metrics.forgetBusiness(account.id);
    },
    upstreamsDown: () =>
      current.payment.breakerState === 'open' && current.kyc.breakerState === 'open',
    ping: () => cache.ping(),
  };
  return business;
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
  const warn = throttledWarn(logger);
  const cluster = new ClusterMetrics(metrics, config.cache.url !== undefined);
  const redis = inputs.cache ? undefined : connectRedis(config, cluster, logger, warn);
  // What the replicas share, chosen here once: Redis with CACHE_URL, else this process alone.
  const state = redis ? redisState(redis) : memoryState();
  const observeCache: CacheObserver = ({ kind, outcome }) => {
    metrics.cacheEvent(kind, outcome);
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
  // Every message between replicas goes through this codec (sealed with the cache key).
  const messages = new LiveMessages(config.cache.encryption, (reason) =>
    cluster.liveRejected.inc({ reason }),
  );
  const buckets = (rate: RateLimitConfig): TokenBuckets =>
    rate.rps === 0 ? UNLIMITED : state.buckets(rate);
  // Per caller, and a caller is its business and its subject: one limiter for every business.
  const rateLimiter: RateLimiter = perCallerKind({
    endUser: buckets(config.rateLimit),
    service: buckets(config.rateLimit.service),
  });
  const callerShare = config.callerShare.benchOff
    ? undefined
    : new CallerShare(
        {
          endUser: config.callerShare.maxConcurrent,
          service: config.callerShare.serviceMaxConcurrent,
        },
        config.callerShare.maxQueued,
      );
  const several = inputs.businesses !== undefined;
  const accounts: readonly BusinessAccount[] = inputs.businesses ?? [
    {
      id: SINGLE_BUSINESS_ID,
      paymentAccessToken: inputs.payment.accessToken,
      kycSecretKey: inputs.kyc.secretKey,
      kycPublicKey: inputs.kyc.publicKey,
      kycBusinessSlug: inputs.kyc.businessSlug,
      webhookSecrets: config.webhooks.secrets,
    },
  ];
  const parts: BusinessParts = {
    inputs,
    state,
    metrics,
    logger,
    traced: tracing !== undefined,
    observeCache,
    messages,
    cluster,
    claims: claimStores(config, redis, logger),
    callerShare,
    settings: {
      upstreamTimeZone: config.upstreamTimeZone,
      maxBatchSize: config.maxBatchSize,
      maxRecordsPerRequest: config.maxRecordsPerRequest,
      sandbox: config.sandbox,
      version: VERSION,
    },
    retired: new Set(),
    closing: false,
  };
  const served = new Map<string, ServedBusiness>();
  const businesses = new Businesses(accounts, several, (account) => {
    const business = buildBusiness(account, several, parts);
    served.set(account.id, business);
    business.removed.addEventListener('abort', () => {
      if (served.get(account.id) === business) served.delete(account.id);
    });
    return business;
  });
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
  // With one business, its webhook paths exist only when it has a secret; with several, a
  // business without one answers 404 on its own paths.
  const webhooks =
    several || config.webhooks.secrets.length > 0 ? routeWebhooks(businesses) : undefined;
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
    businesses,
    ...(webhooks && { webhooks }),
    ...(sseReservations && { sseReservations }),
    authenticate,
    metrics,
    logger,
    ...(tracing && { tracing }),
    readiness: async () => {
      const reasons: string[] = [];
      const all = [...served.values()];
      const first = all[0];
      // One store serves every business (its views share it): asking one is asking it.
      if (first && !(await first.ping())) reasons.push('cache store not answering');
      if (all.length > 0 && all.every((business) => business.upstreamsDown())) {
        reasons.push('both upstream circuits are open');
      }
      return { ready: reasons.length === 0, reasons };
    },
    ...(config.kycPage && { kycPage: kycPage(inputs) }),
    graphiql: config.graphiql
      ? { ...(inputs.graphiqlHeaders && { headers: inputs.graphiqlHeaders }) }
      : false,
    close: async () => {
      // Pollers first (they release their Redis locks), the connection to Redis last.
      parts.closing = true;
      await businesses.close();
      await Promise.allSettled([...parts.retired].map((client) => client.close()));
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
        const token = await signToken(
          demo.secret,
          { sub: userRef, txRefs, ...(demo.business && { business: demo.business }) },
          DEMO_TOKEN_LIFETIME,
        );
        return { token, txRefs, pendingTxRef };
      },
    }),
  });
}
