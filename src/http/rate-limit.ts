/**
 * Per-caller rate limiting: a token bucket per key (the token's `sub`, else the client
 * address), refilled at `rps` up to `burst`, with its own rate for each kind of caller: a
 * service token (a merchant's backend, with scopes) and an end user's token. In memory by
 * default, behind an interface so a shared store (Redis) can hold the counters when several
 * replicas serve.
 */
import { LRUCache } from 'lru-cache';
import type { RateLimitConfig } from '../config.ts';

export interface RateDecision {
  allowed: boolean;
  /** Seconds until one request would be allowed again (when refused). */
  retryAfterSeconds: number;
}

/** A service token carries scopes; an end user's carries none. */
export type CallerKind = 'service' | 'endUser';

/** Token buckets at one rate. */
export interface TokenBuckets {
  take(key: string): Promise<RateDecision> | RateDecision;
}

/** The gateway's limiter: the caller's kind chooses the rate. */
export interface RateLimiter {
  take(key: string, kind: CallerKind): Promise<RateDecision> | RateDecision;
}

/** One set of buckets per kind of caller (their keys never meet). */
export function perCallerKind(buckets: Record<CallerKind, TokenBuckets>): RateLimiter {
  return { take: (key, kind) => buckets[kind].take(`${kind}:${key}`) };
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** The in-memory limiter; at most `maxKeys` callers are tracked (least recent forgotten). */
export class MemoryRateLimiter implements TokenBuckets {
  readonly #rps: number;
  readonly #burst: number;
  readonly #buckets: LRUCache<string, Bucket>;
  readonly #now: () => number;

  constructor(config: RateLimitConfig, now: () => number = () => Date.now(), maxKeys = 100_000) {
    this.#rps = config.rps;
    this.#burst = config.burst;
    this.#buckets = new LRUCache({ max: maxKeys });
    this.#now = now;
  }

  take(key: string): RateDecision {
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, updatedAt: now };
    const refilled = Math.min(
      this.#burst,
      bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.#rps,
    );
    if (refilled >= 1) {
      this.#buckets.set(key, { tokens: refilled - 1, updatedAt: now });
      return { allowed: true, retryAfterSeconds: 0 };
    }
    this.#buckets.set(key, { tokens: refilled, updatedAt: now });
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil((1 - refilled) / this.#rps)),
    };
  }
}

/** No limit (`RATE_LIMIT_RPS=0`, e.g. behind a gateway that already limits). */
export const UNLIMITED: TokenBuckets = { take: () => ({ allowed: true, retryAfterSeconds: 0 }) };
