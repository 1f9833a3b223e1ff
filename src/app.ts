/**
 * The composition root: upstream clients → cache → sources → gateway, from validated settings.
 * main.ts and the tests both build gateways through here.
 */
import { readFileSync } from 'node:fs';
import { type Authenticator, createAuthenticator } from './auth/tokens.ts';
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
}

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
    graphiql: config.graphiql
      ? { ...(inputs.graphiqlHeaders && { headers: inputs.graphiqlHeaders }) }
      : false,
    close: async () => {
      await Promise.allSettled([payment.close(), kyc.close(), cache.close()]);
    },
  });
}
