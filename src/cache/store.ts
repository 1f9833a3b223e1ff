/** The cache store: keyv over a bounded in-process LRU, or Redis when `CACHE_URL` is set. */
import { Keyv } from 'keyv';
import { LRUCache } from 'lru-cache';
import type { CacheConfig } from '../config.ts';

/** A stored record with the time it was stored (to tell its age when served stale). */
export interface CachedEntry<T> {
  value: T;
  storedAt: number;
}

/** Counts what the cache did, for metrics. */
export type CacheObserver = (event: { kind: string; outcome: 'hit' | 'miss' | 'error' }) => void;

/**
 * Record storage with the rule that a cache failure never fails a query: a read error is a
 * miss and a write error is dropped (both reported to the observer).
 */
export class RecordCache {
  readonly #keyv: Keyv;
  readonly #observe: CacheObserver | undefined;

  constructor(keyv: Keyv, observe?: CacheObserver) {
    this.#keyv = keyv;
    this.#observe = observe;
    // keyv re-emits store errors; without a listener they would crash the process.
    keyv.on('error', () => observe?.({ kind: 'store', outcome: 'error' }));
  }

  async get<T>(kind: string, key: string): Promise<CachedEntry<T> | undefined> {
    try {
      const entry = (await this.#keyv.get(key)) as CachedEntry<T> | undefined;
      this.#observe?.({ kind, outcome: entry === undefined ? 'miss' : 'hit' });
      return entry;
    } catch {
      this.#observe?.({ kind, outcome: 'error' });
      return undefined;
    }
  }

  async set<T>(kind: string, key: string, value: T, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0) return;
    try {
      const entry: CachedEntry<T> = { value, storedAt: Date.now() };
      await this.#keyv.set(key, entry, ttlSeconds * 1000);
    } catch {
      this.#observe?.({ kind, outcome: 'error' });
    }
  }

  /** True when the store answers (for /readyz). */
  async ping(): Promise<boolean> {
    try {
      await this.#keyv.get('__ping__');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.#keyv.disconnect();
  }
}

/**
 * keyv's store contract over lru-cache: keyv passes the TTL in ms as a third argument, which
 * lru-cache takes as an options object, so it is translated here (and expired entries then
 * leave the LRU on their own instead of waiting to be pushed out).
 */
class LruStore {
  readonly #lru: LRUCache<string, string>;
  constructor(max: number) {
    this.#lru = new LRUCache<string, string>({ max });
  }
  get(key: string): string | undefined {
    return this.#lru.get(key);
  }
  set(key: string, value: string, ttlMs?: number): boolean {
    this.#lru.set(key, value, ttlMs ? { ttl: ttlMs } : undefined);
    return true;
  }
  delete(key: string): boolean {
    return this.#lru.delete(key);
  }
  clear(): void {
    this.#lru.clear();
  }
  has(key: string): boolean {
    return this.#lru.has(key);
  }
  get size(): number {
    return this.#lru.size;
  }
}

/** Builds the in-process store, bounded to `maxEntries` (least recently used go first). */
export function createMemoryCache(config: CacheConfig, observe?: CacheObserver): RecordCache {
  const store = new LruStore(config.maxEntries);
  return new RecordCache(new Keyv({ store, namespace: 'gw', throwOnErrors: true }), observe);
}
