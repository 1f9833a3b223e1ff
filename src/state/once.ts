/**
 * The set-once store: a name is claimed once within its expiry; whoever asks again before it
 * lapses is told it was taken. Of any number of callers at once, on any replicas, exactly one
 * is first. In memory: a bounded LRU (the oldest forgotten first) on an injected clock. In Redis:
 * `SET <name> 1 NX PX <ttl>`. Failures throw; the caller acts locally and counts it.
 */
import { LRUCache } from 'lru-cache';
import type { RedisConnection } from './redis.ts';

export interface SetOnce {
  /** True for the first claim of `name` within `ttlMs`; false while an earlier one stands. */
  first(name: string, ttlMs: number): Promise<boolean>;
}

/** Most names one process remembers (the oldest forgotten first). */
const MAX_REMEMBERED = 100_000;

/** Claims of this process alone. */
export class MemorySetOnce implements SetOnce {
  readonly #seen: LRUCache<string, true>;

  constructor(now: () => number = () => Date.now(), max = MAX_REMEMBERED) {
    this.#seen = new LRUCache<string, true>({ max, perf: { now }, ttlResolution: 0 });
  }

  /** Synchronous, so that the look and the claim are one step. */
  claim(name: string, ttlMs: number): boolean {
    if (this.#seen.has(name)) return false;
    this.#seen.set(name, true, { ttl: ttlMs });
    return true;
  }

  async first(name: string, ttlMs: number): Promise<boolean> {
    return this.claim(name, ttlMs);
  }
}

/** Claims in Redis, for every replica. */
export class RedisSetOnce implements SetOnce {
  readonly #redis: RedisConnection;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
  }

  async first(name: string, ttlMs: number): Promise<boolean> {
    const reply = await this.#redis.run((client) =>
      client.set(this.#redis.key(name), '1', {
        condition: 'NX',
        expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) },
      }),
    );
    return reply === 'OK';
  }
}
