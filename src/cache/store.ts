/**
 * The record cache over the versioned store (state/records.ts): in memory, or Redis when
 * `CACHE_URL` is set.
 */
import type { CacheConfig } from '../config.ts';
import {
  type Answer,
  MemoryVersionedStore,
  settled,
  type VersionedStore,
  type WriteOutcome,
} from '../state/records.ts';
import { UnreadableCacheValueError } from './seal.ts';

/** A stored record, when it was stored, and until when it is fresh (epoch ms). */
export interface CachedEntry<T> {
  value: T;
  storedAt: number;
  freshUntil: number;
  /** When the read that produced it began (epoch ms); absent in entries of older versions. */
  fetchedAt?: number;
}

/** The store the record cache keeps its entries in. */
export type RecordStore = VersionedStore<CachedEntry<unknown>>;

/**
 * `unreadable`: a value in the store that does not open (sealed with an unknown key, altered,
 * or with its order changed), never served and replaced by the next read.
 */
export type CacheOutcome = 'hit' | 'miss' | 'stale' | 'error' | 'unreadable';

/** Counts what the cache did, for metrics. */
export type CacheObserver = (event: { kind: string; outcome: CacheOutcome }) => void;

/**
 * Record storage with the rule that a cache failure never fails a query: a read error is a
 * miss and a write error is dropped (both reported to the observer).
 */
export class RecordCache {
  readonly #store: RecordStore;
  readonly #observe: CacheObserver | undefined;

  constructor(store: RecordStore, observe?: CacheObserver) {
    this.#store = store;
    this.#observe = observe;
  }

  /**
   * The stored entry, fresh or not (the caller judges `freshUntil`); undefined on error, and for
   * a value that does not open (counted as `unreadable`). At once from the store in memory, a
   * promise from Redis (see {@link settled}).
   */
  get<T>(kind: string, key: string): Answer<CachedEntry<T> | undefined> {
    try {
      const held = this.#store.get(key) as Answer<CachedEntry<T> | undefined>;
      return settled(held) ? held : held.catch((error: unknown) => this.#unread(kind, error));
    } catch (error) {
      return this.#unread(kind, error);
    }
  }

  #unread(kind: string, error: unknown): undefined {
    const unreadable = error instanceof UnreadableCacheValueError;
    this.#observe?.({ kind, outcome: unreadable ? 'unreadable' : 'error' });
    return undefined;
  }

  /**
   * THE write of a record (every path: a miss, `verifyTransaction`, `refreshKycUser`, a live
   * poll, a webhook's read), whatever its status: stores it fresh for `ttlSeconds` and kept
   * `keepSeconds` more (to be served stale only when the upstream is down) — unless a record
   * whose read began later stands (state/records.ts `outranks`), decided atomically by the store.
   * False when such a fresher record was kept; true when written, and on a store failure
   * (reported), where nothing fresher is known. At once in memory, a promise from Redis.
   */
  store<T>(
    kind: string,
    key: string,
    value: T,
    fetchedAt: number,
    ttlSeconds: number,
    keepSeconds = 0,
  ): Answer<boolean> {
    if (ttlSeconds <= 0) return true;
    const now = Date.now();
    const entry: CachedEntry<T> = {
      value,
      storedAt: now,
      freshUntil: now + ttlSeconds * 1000,
      fetchedAt,
    };
    try {
      const outcome = this.#store.writeIfNewer(key, entry, (ttlSeconds + keepSeconds) * 1000);
      return settled(outcome)
        ? this.#wrote(kind, outcome)
        : outcome.then(
            (later) => this.#wrote(kind, later),
            () => this.#writeFailed(kind),
          );
    } catch {
      return this.#writeFailed(kind);
    }
  }

  #wrote(kind: string, outcome: WriteOutcome): boolean {
    if (outcome === 'replaced-unreadable') this.#observe?.({ kind, outcome: 'unreadable' });
    return outcome !== 'kept';
  }

  #writeFailed(kind: string): true {
    this.#observe?.({ kind, outcome: 'error' });
    return true;
  }

  /** Reports a lookup's outcome (the sources decide hit, miss or stale). */
  report(kind: string, outcome: CacheOutcome): void {
    this.#observe?.({ kind, outcome });
  }

  /** True when the store answers (for /readyz). */
  async ping(): Promise<boolean> {
    try {
      return await this.#store.ping();
    } catch {
      return false;
    }
  }
}

/**
 * Builds the in-process cache, bounded to `maxEntries` records and `maxBytes` of their estimated
 * heap size (least recently used go first). Records are kept as frozen objects rather than JSON
 * text: a hit then costs no parse.
 */
export function createMemoryCache(config: CacheConfig, observe?: CacheObserver): RecordCache {
  return new RecordCache(new MemoryVersionedStore<CachedEntry<unknown>>(config), observe);
}
