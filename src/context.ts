/**
 * The per-request GraphQL context: its type, its factory (run by the pipeline for every
 * transport), and the per-request loaders it holds.
 */
import DataLoader from 'dataloader';
import type { Viewer } from './auth.ts';
import type { ReadOptions, RecordSources } from './cache/sources.ts';
import { BadUserInputError } from './errors.ts';
import type { LiveStatusHub } from './live/hub.ts';
import type { UpstreamKycUser, UpstreamTransaction } from './model/records.ts';
import type { PaymentConfirmations } from './payments/confirmation.ts';
import type { CallerShare } from './upstream/caller-share.ts';
import type { Waiting } from './upstream/http.ts';

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
  /** `confirmPayment`: comparison, the claims of payments for orders, and its counter. */
  confirmations: PaymentConfirmations;
  /**
   * Aborted when the client goes away. A function, so that only the subscriptions that need
   * it pay for it (the transport builds an AbortController on first access).
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
  confirmations: PaymentConfirmations;
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
  end: Waiting,
): GraphQLContext {
  const stale: StaleRecord[] = [];
  const { caller } = admitted;
  const share = deps.callerShare;
  const kind = admitted.viewer.scopes.size > 0 ? 'service' : 'endUser';
  return {
    viewer: admitted.viewer,
    caller,
    loaders: createLoaders(deps.sources, stale, {
      maxRecords: deps.settings.maxRecordsPerRequest,
      end,
      ...(share && {
        gate: (upstream, work, gone) => share.run(caller, kind, upstream, work, gone),
      }),
    }),
    settings: deps.settings,
    live: deps.live,
    confirmations: deps.confirmations,
    signal: end.abandoned,
    stale,
  };
}

// ---------------------------------------------------------------------------------------------
// Per-request DataLoaders (created in the context factory, never shared between requests):
// each distinct record costs at most one read per request, results come back in key order.
// The REST interfaces have no batch call, so a batch is a set of parallel reads; a failure is
// returned at its own position only.
//
// One request reads at most `maxRecords` distinct records (transactions and KYC users together,
// fresh or not), whatever its aliases: past that, each further record fails at its own position
// with BAD_USER_INPUT and costs no upstream call. Misses run within the caller's share of
// upstream concurrency (`gate`); a miss still waiting there when the request ends (and no other
// request waits for the same record) is dropped.
//

export interface Loaders {
  transaction: DataLoader<string, UpstreamTransaction | null>;
  /** Always reads the upstream (mutations). */
  uncachedTransaction: DataLoader<string, UpstreamTransaction | null>;
  kycUser: DataLoader<string, UpstreamKycUser | null>;
  /** Always reads the upstream (mutations). */
  uncachedKycUser: DataLoader<string, UpstreamKycUser | null>;
}

/** What every loader of one request shares. */
export interface RequestLimits {
  /** Most distinct records the request may read. */
  maxRecords: number;
  /** Runs a miss's upstream call within the caller's share. */
  gate?: ReadOptions['gate'];
  /** The request's end: looked at when a call has to wait, listened to only for a retry's sleep. */
  end?: Waiting;
}

function loader<T>(
  kind: string,
  seen: Set<string>,
  maxRecords: number,
  read: (key: string) => Promise<T | null>,
): DataLoader<string, T | null> {
  // The batch answers at once with one promise per key, which DataLoader's own promise for
  // that key follows: each record settles when its read does, not when the batch's slowest
  // does (so `@stream` sends each entry of `transactions` as it arrives).
  return new DataLoader<string, T | null>(async (keys) =>
    keys.map((key) => {
      const record = `${kind}:${key}`;
      if (!seen.has(record)) {
        if (seen.size >= maxRecords) {
          return new BadUserInputError(
            `This request reads more than ${maxRecords} distinct records.`,
          );
        }
        seen.add(record);
      }
      // The read's own promise, followed as it is: every rejection on a record's read path is
      // an Error already (turning others into one cost a promise and a step per record).
      return read(key) as unknown as T | null;
    }),
  );
}

/** A record served from a stale copy because its upstream was down. */
export interface StaleRecord {
  txRef: string;
  ageSeconds: number;
}

/**
 * Builds the loaders of one request over the process-wide record sources; stale copies served
 * to this request are appended to `stale` (the response says so).
 */
export function createLoaders(
  sources: RecordSources,
  stale: StaleRecord[],
  limits: RequestLimits,
): Loaders {
  return new RequestLoaders(sources, stale, limits);
}

/**
 * The loaders of one request, each made when first used (most operations use one of the four).
 * A class, its getters on the prototype: getters in an object literal made per request gave
 * each request's object a hidden class of its own, which kept every request's objects alive
 * until the next full collection of the heap.
 */
class RequestLoaders implements Loaders {
  readonly #sources: RecordSources;
  readonly #seen = new Set<string>();
  readonly #maxRecords: number;
  /** The read options, made once per request rather than once per key. */
  readonly #request: ReadOptions;
  readonly #cached: ReadOptions;
  readonly #uncached: ReadOptions;
  #transaction: Loaders['transaction'] | undefined;
  #uncachedTransaction: Loaders['uncachedTransaction'] | undefined;
  #kycUser: Loaders['kycUser'] | undefined;
  #uncachedKycUser: Loaders['uncachedKycUser'] | undefined;

  constructor(sources: RecordSources, stale: StaleRecord[], limits: RequestLimits) {
    this.#sources = sources;
    this.#maxRecords = limits.maxRecords;
    this.#request = {
      ...(limits.gate && { gate: limits.gate }),
      ...(limits.end && { end: limits.end }),
    };
    this.#cached = {
      ...this.#request,
      onStale: (txRef, ageSeconds) => stale.push({ txRef, ageSeconds }),
    };
    this.#uncached = { ...this.#request, bypassCache: true };
  }

  /** A loader of this request: its records count toward the request's distinct records. */
  #loader<T>(kind: string, read: (key: string) => Promise<T | null>): DataLoader<string, T | null> {
    return loader(kind, this.#seen, this.#maxRecords, read);
  }

  get transaction(): Loaders['transaction'] {
    this.#transaction ??= this.#loader('tx', (ref) => this.#sources.transaction(ref, this.#cached));
    return this.#transaction;
  }

  get uncachedTransaction(): Loaders['uncachedTransaction'] {
    this.#uncachedTransaction ??= this.#loader('tx', (ref) =>
      this.#sources.transaction(ref, this.#uncached),
    );
    return this.#uncachedTransaction;
  }

  get kycUser(): Loaders['kycUser'] {
    this.#kycUser ??= this.#loader('kyc', (ref) => this.#sources.kycUser(ref, this.#request));
    return this.#kycUser;
  }

  get uncachedKycUser(): Loaders['uncachedKycUser'] {
    this.#uncachedKycUser ??= this.#loader('kyc', (ref) =>
      this.#sources.kycUser(ref, this.#uncached),
    );
    return this.#uncachedKycUser;
  }
}
