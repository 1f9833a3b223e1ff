/**
 * The composition root: upstream clients → cache → sources → gateway, from validated settings.
 * main.ts and the tests both build gateways through here.
 */
import { readFileSync } from 'node:fs';
import { type Authenticator, createAuthenticator, signToken } from './auth/tokens.ts';
import { SCOPE_TRANSACTIONS } from './auth/viewer.ts';
import { createSources } from './cache/sources.ts';
import { type CacheObserver, createMemoryCache, type RecordCache } from './cache/store.ts';
import type {
  AuthConfig,
  GatewayConfig,
  KycUpstreamConfig,
  PaymentUpstreamConfig,
} from './config.ts';
import { MemoryRateLimiter, UNLIMITED } from './http/rate-limit.ts';
import { MemoryLiveStatusHub } from './live/memory-hub.ts';
import { createLogger, type Logger } from './observability/logger.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import { createGateway, type Gateway } from './server.ts';
import type { UpstreamObserver } from './upstream/http.ts';
import { KycClient } from './upstream/kyc.ts';
import { PaymentClient } from './upstream/payment.ts';
import { createKycPageHandler, type KycPageHandler } from './web/kycPage.ts';

const VERSION = (
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
   * HS256 secret with which `/kyc` signs short-lived demo end-user tokens. Only for a secret
   * made for this run in sandbox mode (main.ts) or a test's: never an operator's secret.
   */
  kycPageDemoSecret?: string;
}

const BREAKER_GAUGE = { closed: 0, open: 1, half_open: 2 } as const;

/** Upstream events → metrics and log lines (no URL, body or credential in either). */
function upstreamObserver(metrics: GatewayMetrics, logger: Logger): UpstreamObserver {
  return {
    attempt: ({ upstream, outcome, status, durationMs }) => {
      metrics.upstreamCalls.inc({ upstream, outcome });
      metrics.upstreamLatency.observe({ upstream, outcome }, durationMs / 1000);
      if (outcome !== 'ok') logger.warn({ upstream, outcome, status }, 'upstream call failed');
    },
    retry: ({ upstream, delayMs, after }) => {
      metrics.upstreamRetries.inc({ upstream });
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

/** Builds a gateway from settings. */
export function createApp(inputs: AppInputs): Gateway {
  const { config } = inputs;
  const metrics = new GatewayMetrics();
  const logger = inputs.logger ?? createLogger(config.log);
  const observer = upstreamObserver(metrics, logger);
  const payment = new PaymentClient(inputs.payment, config.upstream, observer);
  const kyc = new KycClient(inputs.kyc, config.upstream, observer);
  const observeCache: CacheObserver = ({ kind, outcome }) => {
    metrics.cacheEvents.inc({ kind, outcome });
    if (outcome === 'error') logger.warn({ kind }, 'cache store failed; serving without it');
  };
  const cache = inputs.cache
    ? inputs.cache(observeCache)
    : createMemoryCache(config.cache, observeCache);
  const sources = createSources({
    payment,
    kyc,
    cache,
    policy: config.cache,
    businessSlug: inputs.kyc.businessSlug,
  });
  const live = new MemoryLiveStatusHub({ sources, settings: config.live });
  const authenticate: Authenticator = createAuthenticator(inputs.auth);
  return createGateway({
    hardening: {
      limits: config.limits,
      production: config.production,
      introspection: config.introspection,
      trustedDocuments: config.trustedDocuments,
    },
    corsOrigins: config.corsOrigins,
    rateLimiter: config.rateLimit.rps === 0 ? UNLIMITED : new MemoryRateLimiter(config.rateLimit),
    live,
    sources,
    authenticate,
    metrics,
    logger,
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
      sandbox: config.sandbox,
      version: VERSION,
      live: config.live,
    },
    ...(config.kycPage && { kycPage: kycPage(inputs) }),
    graphiql: config.graphiql
      ? { ...(inputs.graphiqlHeaders && { headers: inputs.graphiqlHeaders }) }
      : false,
    close: async () => {
      await live.close();
      await Promise.allSettled([payment.close(), kyc.close(), cache.close()]);
      logger.flush();
    },
  });
}

function kycPage(inputs: AppInputs): KycPageHandler {
  const secret = inputs.kycPageDemoSecret;
  return createKycPageHandler({
    sdkScriptUrl: inputs.kyc.sdkScriptUrl,
    ...(secret !== undefined && {
      // An end user's token: its own KYC (sub) and the demo payments, never kyc:read.
      demoToken: (userRef: string) =>
        signToken(secret, { sub: userRef, scope: SCOPE_TRANSACTIONS }, DEMO_TOKEN_LIFETIME),
    }),
  });
}
