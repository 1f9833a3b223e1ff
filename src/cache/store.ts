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

/** Builds the in-process store, bounded to `maxEntries` (least recently used go first). */
export function createMemoryCache(config: CacheConfig, observe?: CacheObserver): RecordCache {
  const lru = new LRUCache<string, object>({ max: config.maxEntries });
  return new RecordCache(new Keyv({ store: lru, namespace: 'gw' }), observe);
}
