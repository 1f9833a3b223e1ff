/**
 * Per-caller rate limiting: a token bucket per key (the token's `sub`, else the client
 * address), refilled at `rps` up to `burst`, with its own rate for each kind of caller: a
 * service token (a merchant's backend, with scopes) and an end user's token. The buckets
 * are the state layer's (state/quota.ts): in memory, or in Redis for every replica.
 */
import { ALLOWED, type RateDecision, type TokenBuckets } from '../state/quota.ts';

/** A service token carries scopes; an end user's carries none. */
export type CallerKind = 'service' | 'endUser';

/** The gateway's limiter: the caller's kind chooses the rate. */
export interface RateLimiter {
  take(key: string, kind: CallerKind): Promise<RateDecision> | RateDecision;
}

/** One set of buckets per kind of caller (their keys never meet). */
export function perCallerKind(buckets: Record<CallerKind, TokenBuckets>): RateLimiter {
  return { take: (key, kind) => buckets[kind].take(`${kind}:${key}`) };
}

/** No limit (`RATE_LIMIT_RPS=0`, e.g. behind a gateway that already limits). */
export const UNLIMITED: TokenBuckets = { take: () => ALLOWED };
