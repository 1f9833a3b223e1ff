/**
 * Where records come from: the cache first, then the upstream, with single flight across
 * requests and the TTL policy of contract §8. Created once per process; loaders wrap it per
 * request. Only records that every authorized caller may see are stored here: the resolvers
 * check access before asking.
 */
import { createHash } from 'node:crypto';
import type { CacheConfig } from '../config.ts';
import { isFinalStatus, normalizeStatus } from '../model/status.ts';
import type { KycClient } from '../upstream/kyc.ts';
import type { PaymentClient } from '../upstream/payment.ts';
import type { UpstreamKycUser, UpstreamTransaction } from '../upstream/shapes.ts';
import { SingleFlight } from './single-flight.ts';
import type { RecordCache } from './store.ts';

export interface ReadOptions {
  /** Skip the cache read and go to the upstream (the result is still written). */
  fresh?: boolean;
}

export interface RecordSources {
  transaction(txRef: string, options?: ReadOptions): Promise<UpstreamTransaction | null>;
  kycUser(userRef: string, options?: ReadOptions): Promise<UpstreamKycUser | null>;
}

export interface SourceDeps {
  payment: PaymentClient;
  kyc: KycClient;
  cache: RecordCache;
  policy: CacheConfig;
  /** The business slug: part of the KYC key, since one store may serve several businesses. */
  businessSlug: string;
}

/** Cache keys name no person in clear: user references are hashed. */
function kycKey(slug: string, userRef: string): string {
  return `kyc:${createHash('sha256').update(`${slug}\u0000${userRef}`).digest('base64url')}`;
}

/** Builds the record sources. */
export function createSources(deps: SourceDeps): RecordSources {
  const flights = new SingleFlight();
  const { cache, policy } = deps;

  function transactionTtl(record: UpstreamTransaction): number {
    return isFinalStatus(normalizeStatus(record.txStatus))
      ? policy.ttlFinalSeconds
      : policy.ttlPendingSeconds;
  }

  async function read<T>(
    kind: string,
    key: string,
    options: ReadOptions,
    fetch: () => Promise<T | null>,
    ttl: (record: T) => number,
  ): Promise<T | null> {
    const fetchAndStore = async (): Promise<T | null> => {
      const record = await fetch();
      // Unknown records are not cached: a reference may become known a moment later.
      if (record !== null) await cache.set(kind, key, record, ttl(record));
      return record;
    };
    if (options.fresh) return flights.run(`fresh:${key}`, fetchAndStore);
    const cached = await cache.get<T>(kind, key);
    if (cached) return cached.value;
    return flights.run(key, async () => {
      // Another request may have filled the cache between our miss and taking the flight.
      const again = await cache.get<T>(kind, key);
      return again ? again.value : fetchAndStore();
    });
  }

  return {
    transaction: (txRef, options = {}) =>
      read(
        'transaction',
        `tx:${txRef}`,
        options,
        () => deps.payment.getTransaction(txRef),
        transactionTtl,
      ),
    kycUser: (userRef, options = {}) =>
      read(
        'kyc',
        kycKey(deps.businessSlug, userRef),
        options,
        () => deps.kyc.getUser(userRef),
        () => policy.ttlKycSeconds,
      ),
  };
}
