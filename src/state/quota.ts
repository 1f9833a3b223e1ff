/**
 * Token buckets: a bucket per key, refilled at `rps` up to `burst`; each take spends a token when
 * there is one, else says when one is back. In memory (an LRU of buckets on an injected clock),
 * or in Redis, shared by every replica: N replicas allow a key `rps`/`burst` in total, not N
 * times as much. There one Lua script reads, refills, takes and writes the bucket atomically, on
 * Redis's clock (the replicas' clocks may differ); the bucket is a hash under
 * `<prefix>:rl:<sha256 of the key>` (a key is a token's subject or a client address: neither
 * appears in clear), expiring once it would be full again. The Redis buckets throw when Redis
 * fails; the state port (index.ts) then allows the take and counts the failure.
 */
import { LRUCache } from 'lru-cache';
import { hashedKeyPart, type RedisConnection } from './redis.ts';
import { COUNT_IN_WINDOW, TAKE_TOKEN } from './scripts.ts';

export interface RateDecision {
  allowed: boolean;
  /** Seconds until one request would be allowed again (when refused). */
  retryAfterSeconds: number;
}

/** The rate of a set of buckets. */
export interface BucketRate {
  rps: number;
  burst: number;
}

/** Token buckets at one rate. */
export interface TokenBuckets {
  take(key: string): Promise<RateDecision> | RateDecision;
}

/** Every take allowed. */
export const ALLOWED: RateDecision = { allowed: true, retryAfterSeconds: 0 };

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Buckets of this process alone; at most `maxKeys` callers are tracked (least recent forgotten). */
export class MemoryTokenBuckets implements TokenBuckets {
  readonly #rps: number;
  readonly #burst: number;
  readonly #buckets: LRUCache<string, Bucket>;
  readonly #now: () => number;

  constructor(config: BucketRate, now: () => number = () => Date.now(), maxKeys = 100_000) {
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

/** Buckets in Redis, for every replica. */
export class RedisTokenBuckets implements TokenBuckets {
  readonly #redis: RedisConnection;
  readonly #rps: string;
  readonly #burst: string;

  constructor(redis: RedisConnection, rate: BucketRate) {
    this.#redis = redis;
    this.#rps = String(rate.rps);
    this.#burst = String(rate.burst);
  }

  async take(key: string): Promise<RateDecision> {
    const reply = await this.#redis.script(
      TAKE_TOKEN,
      [this.#redis.key('rl', hashedKeyPart(key))],
      [this.#rps, this.#burst],
    );
    const [allowed, waitMs] = Array.isArray(reply) ? reply.map(Number) : [];
    if (allowed === undefined || waitMs === undefined) throw new Error('unexpected reply');
    if (allowed === 1) return ALLOWED;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  }
}

/** Counters in fixed windows: at most `most` takes per key in each window of `windowMs`. */
export interface WindowCounters {
  /** True when this take is within the key's window's `most`. */
  take(key: string): Promise<boolean>;
}

/** Windows counted in this process alone (a window starts with its first take). */
export class MemoryWindowCounters implements WindowCounters {
  readonly #windows = new Map<string, { start: number; count: number }>();
  readonly #windowMs: number;
  readonly #most: number;
  readonly #now: () => number;

  constructor(windowMs: number, most: number, now: () => number = () => Date.now()) {
    this.#windowMs = windowMs;
    this.#most = most;
    this.#now = now;
  }

  /** Synchronous: the look and the count are one step. */
  count(key: string): boolean {
    const now = this.#now();
    let window = this.#windows.get(key);
    if (!window || now - window.start >= this.#windowMs) {
      // Bounded: windows past their time are dropped when many keys are counted.
      if (this.#windows.size >= 10_000) {
        for (const [name, old] of this.#windows) {
          if (now - old.start >= this.#windowMs) this.#windows.delete(name);
        }
      }
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    window.count += 1;
    return window.count <= this.#most;
  }

  async take(key: string): Promise<boolean> {
    return this.count(key);
  }
}

/** Windows in Redis, for every replica (`<prefix>:<key>`, expiring with its window). */
export class RedisWindowCounters implements WindowCounters {
  readonly #redis: RedisConnection;
  readonly #windowMs: string;
  readonly #most: string;

  constructor(redis: RedisConnection, windowMs: number, most: number) {
    this.#redis = redis;
    this.#windowMs = String(windowMs);
    this.#most = String(most);
  }

  async take(key: string): Promise<boolean> {
    const reply = await this.#redis.script(
      COUNT_IN_WINDOW,
      [this.#redis.key(key)],
      [this.#windowMs, this.#most],
    );
    return Number(reply) === 1;
  }
}
