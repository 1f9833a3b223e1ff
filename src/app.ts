/**
 * The composition root: upstream clients → cache → sources → gateway, from validated settings.
 * main.ts and the tests both build gateways through here.
 */
import { readFileSync } from 'node:fs';
import { type Authenticator, createAuthenticator, signToken } from './auth/tokens.ts';
import { SCOPE_TRANSACTIONS } from './auth/viewer.ts';
import { createSources } from './cache/sources.ts';
import { createMemoryCache, type RecordCache } from './cache/store.ts';
import type {
  AuthConfig,
  GatewayConfig,
  KycUpstreamConfig,
  PaymentUpstreamConfig,
} from './config.ts';
import { createGateway, type Gateway } from './server.ts';
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
  /** A cache to use instead of the configured one (tests). */
  cache?: RecordCache;
  /**
   * HS256 secret with which `/kyc` signs short-lived demo end-user tokens. Only for a secret
   * made for this run in sandbox mode (main.ts) or a test's: never an operator's secret.
   */
  kycPageDemoSecret?: string;
}

// Long enough to verify a demo user and watch a payment settle; short for a token in a page.
const DEMO_TOKEN_LIFETIME = '30m';

/** Builds a gateway from settings. */
export function createApp(inputs: AppInputs): Gateway {
  const { config } = inputs;
  const payment = new PaymentClient(inputs.payment, config.upstream);
  const kyc = new KycClient(inputs.kyc, config.upstream);
  const cache = inputs.cache ?? createMemoryCache(config.cache);
  const sources = createSources({
    payment,
    kyc,
    cache,
    policy: config.cache,
    businessSlug: inputs.kyc.businessSlug,
  });
  const authenticate: Authenticator = createAuthenticator(inputs.auth);
  return createGateway({
    sources,
    cache,
    authenticate,
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
      await Promise.allSettled([payment.close(), kyc.close(), cache.close()]);
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
