/** The per-request GraphQL context, and its factory (run by the pipeline for every transport). */
import type { Viewer } from './auth.ts';
import type { RecordSources } from './cache/sources.ts';
import type { LiveStatusHub } from './live/hub.ts';
import { createLoaders, type Loaders, type StaleRecord } from './loaders/index.ts';
import type { CallerShare } from './upstream/caller-share.ts';

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

/** What the context of a request is made of, besides the request. */
export interface ContextDeps {
  sources: RecordSources;
  settings: ResolverSettings;
  live: LiveStatusHub;
  /** Each caller's share of upstream concurrency; absent, no per-caller bound. */
  callerShare?: CallerShare | undefined;
}

/**
 * The context of one request: the admitted viewer and caller, fresh loaders (batching and the
 * per-request record bound; upstream calls through the caller's share), and where stale records
 * are noted.
 */
export function createContext(
  deps: ContextDeps,
  admitted: { viewer: Viewer; caller: string },
  signal: () => AbortSignal,
): GraphQLContext {
  const stale: StaleRecord[] = [];
  const { caller } = admitted;
  const share = deps.callerShare;
  return {
    viewer: admitted.viewer,
    caller,
    loaders: createLoaders(deps.sources, stale, {
      maxRecords: deps.settings.maxRecordsPerRequest,
      ...(share && { gate: (upstream, work) => share.run(caller, upstream, work) }),
    }),
    settings: deps.settings,
    live: deps.live,
    signal,
    stale,
  };
}
