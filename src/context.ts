/** The per-request GraphQL context and its factory's inputs. */
import type { Viewer } from './auth.ts';
import type { LiveStatusHub } from './live/hub.ts';
import type { Loaders, StaleRecord } from './loaders/index.ts';

/** Public values of the KYC widget (what the browser needs to start it); never the secret key. */
export interface KycSdkSettings {
  scriptUrl: string;
  publicKey: string;
  businessSlug: string;
}

/** Settings the resolvers read; fixed for the process. */
export interface ResolverSettings {
  upstreamTimeZone: string;
  sdk: KycSdkSettings;
  maxBatchSize: number;
  /** Most distinct upstream records one request may read. */
  maxRecordsPerRequest: number;
  sandbox: boolean;
  version: string;
}

export interface GraphQLContext {
  viewer: Viewer;
  /** The caller's identity for per-caller limits: `sub:<subject>`, or `ip:<address>`. */
  caller: string;
  loaders: Loaders;
  settings: ResolverSettings;
  /** Live transaction status: one poller per txRef (per process, or per cluster with Redis). */
  live: LiveStatusHub;
  /**
   * Aborted when the client goes away. A function, so that only the subscriptions that need
   * it pay for it (the Fetch adapter builds an AbortController on first access).
   */
  signal: () => AbortSignal;
  /** Records served stale to this request (reported in `extensions.stale`). */
  stale: StaleRecord[];
}
