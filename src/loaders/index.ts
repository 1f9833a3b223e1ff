/**
 * Per-request DataLoaders (created in the context factory, never shared between requests):
 * each distinct record costs at most one read per request, results come back in key order.
 * The REST interfaces have no batch call, so a batch is a set of parallel reads; a failure is
 * returned at its own position only.
 */
import DataLoader from 'dataloader';
import type { RecordSources } from '../cache/sources.ts';
import type { UpstreamKycUser, UpstreamTransaction } from '../upstream/shapes.ts';

export interface Loaders {
  transaction: DataLoader<string, UpstreamTransaction | null>;
  /** Always reads the upstream (mutations). */
  freshTransaction: DataLoader<string, UpstreamTransaction | null>;
  kycUser: DataLoader<string, UpstreamKycUser | null>;
  /** Always reads the upstream (mutations). */
  freshKycUser: DataLoader<string, UpstreamKycUser | null>;
}

function loader<T>(read: (key: string) => Promise<T | null>): DataLoader<string, T | null> {
  return new DataLoader<string, T | null>((keys) =>
    Promise.all(keys.map((key) => read(key).catch((error: unknown) => toError(error)))),
  );
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
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
export function createLoaders(sources: RecordSources, stale: StaleRecord[] = []): Loaders {
  return {
    transaction: loader((ref) =>
      sources.transaction(ref, {
        onStale: (ageSeconds) => stale.push({ txRef: ref, ageSeconds }),
      }),
    ),
    freshTransaction: loader((ref) => sources.transaction(ref, { fresh: true })),
    kycUser: loader((ref) => sources.kycUser(ref)),
    freshKycUser: loader((ref) => sources.kycUser(ref, { fresh: true })),
  };
}
