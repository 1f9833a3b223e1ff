/** Normalisation of the upstream `txStatus` into the `TransactionStatus` enum. */
import type { TransactionStatus } from '../graphql/generated/resolvers-types.ts';

const STATUS_BY_RAW: ReadonlyMap<string, TransactionStatus> = new Map([
  ['SUCCESS', 'SUCCESSFUL'],
  ['SUCCESSFUL', 'SUCCESSFUL'],
  ['SUCCEEDED', 'SUCCESSFUL'],
  ['FAILED', 'FAILED'],
  ['FAILURE', 'FAILED'],
  ['DECLINED', 'FAILED'],
  ['PENDING', 'PENDING'],
  ['PROCESSING', 'PENDING'],
  ['INITIATED', 'PENDING'],
]);

/** Maps an upstream status, ignoring case and surrounding space; anything else is UNKNOWN. */
export function normalizeStatus(raw: string): TransactionStatus {
  return STATUS_BY_RAW.get(raw.trim().toUpperCase()) ?? 'UNKNOWN';
}

/** SUCCESSFUL and FAILED do not change any more: they may be cached long. */
export function isFinalStatus(status: TransactionStatus): boolean {
  return status === 'SUCCESSFUL' || status === 'FAILED';
}
