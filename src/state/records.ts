/**
 * The versioned store: a value per key, each with the version it was read at (`fetchedAt`, epoch
 * ms), written only when no later version stands ({@link outranks}), decided atomically by the
 * store (one synchronous step in memory, one Lua script in Redis). The record cache
 * (cache/store.ts) keeps upstream records in it.
 *
 * In memory: a bounded LRU of the objects themselves (no serialisation: a hit costs no parse). In Redis:
 * `<prefix>:cache:<key>`, the value's version in clear, `m:<fetchedAt>|`, followed by the JSON
 * `{"value":…,"expires":…}` (the form keyv wrote, so values written before still read), sealed
 * with `CACHE_ENCRYPTION_KEY` when set. The version is part of what the seal authenticates (its
 * associated data, with the Redis key): a value put back with its version changed does not open,
 * and does not outrank a fresh read either. A value that does not open is never served, and is
 * replaced by a compare-and-swap (unless another write came first).
 */
import { LRUCache } from 'lru-cache';
import { SEALED_PREFIX, type Sealer, UnreadableCacheValueError } from '../cache/seal.ts';
import type { RedisConnection } from './redis.ts';
import { REPLACE_IF_SAME, WRITE_IF_NEWER } from './scripts.ts';

/** What a versioned store holds: anything that says when its read began. */
export interface Versioned {
  /** When the read that produced it began (epoch ms); absent in entries of older versions. */
  fetchedAt?: number;
}

/**
 * True when a value whose read began at `storedFetchedAt` must not be replaced by one whose read
 * began at `incomingFetchedAt`: values never go back in time (a slow read that began before a
 * fresher one stored its value does not overwrite it).
 */
export function outranks(storedFetchedAt: number | undefined, incomingFetchedAt: number): boolean {
  return (storedFetchedAt ?? 0) > incomingFetchedAt;
}

/**
 * What a write did: wrote the value, kept a fresher one, or wrote over a value that did not open
 * (which orders nothing, whatever it claims).
 */
export type WriteOutcome = 'written' | 'kept' | 'replaced-unreadable';

/**
 * The versioned store. Failures (Redis down, a value that does not open) throw or reject. A store
 * in memory answers at once, with the value itself rather than a promise of it (a promise per
 * lookup and per write was a tenth of what reading a record allocated); the store in Redis
 * answers with promises. Callers take both (see {@link settled}).
 */
export interface VersionedStore<E extends Versioned> {
  /** The value held, or undefined; throws {@link UnreadableCacheValueError} for one that does not open. */
  get(key: string): Answer<E | undefined>;
  /** Writes `entry` for `ttlMs` unless the value held {@link outranks} it. */
  writeIfNewer(key: string, entry: E, ttlMs: number): Answer<WriteOutcome>;
  /** True when the store answers (for /readyz). */
  ping(): Promise<boolean>;
}

/** What a store answered: the value, at once or later. */
export type Answer<T> = T | Promise<T>;

/** True when a store's answer is still to come (a promise), false when it is the value itself. */
export function settled<T>(answer: Answer<T>): answer is T {
  return !(answer instanceof Promise);
}

/** Bounds of the in-process store. */
export interface MemoryStoreBounds {
  maxEntries: number;
  /** Of the values' estimated heap size. */
  maxBytes: number;
  /**
   * Whether each value is frozen as it is stored, everything in it included (`CACHE_FREEZE_RECORDS`:
   * on except in production), so that code writing to a value shared by requests throws.
   */
  freeze?: boolean;
}

/**
 * The in-process store, bounded in entries and in bytes (least recently used go first). Values
 * are kept as they are, shared by the requests that read them: nothing may write to them (the
 * record types are read-only). With `freeze`, each is frozen in the walk that estimates its
 * size, so that a write throws: a guard for development and the tests, off in production, where
 * freezing cost about 3 % of the CPU of a request reading twenty new records.
 */
export class MemoryVersionedStore<E extends Versioned> implements VersionedStore<E> {
  readonly #lru: LRUCache<string, E & object>;

  constructor(bounds: MemoryStoreBounds, now: () => number = () => Date.now()) {
    const freeze = bounds.freeze ?? true;
    this.#lru = new LRUCache<string, E & object>({
      max: bounds.maxEntries,
      maxSize: bounds.maxBytes,
      sizeCalculation: (value) => measure(value, freeze),
      // Expiry on the injected clock (lru-cache reads it through `perf`).
      perf: { now },
      ttlResolution: 0,
    });
  }

  get(key: string): E | undefined {
    return this.#lru.get(key);
  }

  /** In one synchronous step: nothing else runs between the look and the write. */
  writeIfNewer(key: string, entry: E, ttlMs: number): WriteOutcome {
    // A look without moving the entry up (the write that follows does, or the entry stands).
    const held = this.#lru.peek(key);
    if (held && outranks(held.fetchedAt, entry.fetchedAt ?? 0)) return 'kept';
    this.#lru.set(key, entry as E & object, { ttl: ttlMs });
    return 'written';
  }

  async ping(): Promise<boolean> {
    return true;
  }
}

/**
 * Roughly the heap bytes a value takes (object and array headers, a slot per property or
 * element, a string's characters; strings shared between records are counted in each), and
 * with `freeze` the value and everything in it frozen in the same walk. Within 10 % of V8's own
 * figure for both kinds of upstream record (measured: 1,162 vs 1,150 bytes for a transaction,
 * 3,372 vs 3,152 for a KYC user of 3 × 3 checks).
 */
function measure(value: unknown, freeze: boolean): number {
  switch (typeof value) {
    case 'string':
      return 16 + value.length;
    case 'number':
      return 8;
    case 'object': {
      if (value === null) return 0;
      if (freeze) Object.freeze(value);
      if (Array.isArray(value)) {
        let bytes = 32 + 8 * value.length;
        for (const item of value) bytes += measure(item, freeze);
        return bytes;
      }
      let bytes = 24;
      for (const key in value)
        bytes += 8 + measure((value as Record<string, unknown>)[key], freeze);
      return bytes;
    }
    default:
      return 0;
  }
}

/** What the seal of a value is bound to: its Redis key and its version. */
function sealedPlace(redisKey: string, fetchedAt: string | undefined): string {
  return fetchedAt === undefined ? redisKey : `${redisKey}\u0000m:${fetchedAt}`;
}

/**
 * The version in clear at the head of a value. Values of older versions (`m:<fetchedAt>:<0|1>|`,
 * or none) rank by their time alone, or lowest; sealed ones do not open.
 */
const ORDER = /^m:(\d+)(?::[01])?\|/;

/** The Redis store, shared by every replica. */
export class RedisVersionedStore<E extends Versioned> implements VersionedStore<E> {
  readonly #connection: RedisConnection;
  readonly #cipher: Sealer | undefined;
  readonly #now: () => number;

  constructor(
    connection: RedisConnection,
    cipher: Sealer | undefined,
    now: () => number = () => Date.now(),
  ) {
    this.#connection = connection;
    this.#cipher = cipher;
    this.#now = now;
  }

  /** The name a value has in Redis, which its seal is bound to. */
  #redisKey(key: string): string {
    return this.#connection.key('cache', key);
  }

  async get(key: string): Promise<E | undefined> {
    const redisKey = this.#redisKey(key);
    const held = await this.#connection.run((client) => client.get(redisKey));
    if (held === null) return undefined;
    const { value, expires } = JSON.parse(this.#open(redisKey, held)) as {
      value: E;
      expires?: number;
    };
    return expires !== undefined && expires <= this.#now() ? undefined : value;
  }

  /**
   * The JSON of a value as Redis holds it, its version checked: with a key, the version and the
   * Redis key are the seal's associated data, so a value moved, altered or put back with another
   * version throws. Without a key nothing is authenticated (docs/security.md says what a party
   * that can write to Redis can then do).
   */
  #open(redisKey: string, held: string): string {
    const order = ORDER.exec(held);
    const stored = order ? held.slice(order[0].length) : held;
    if (this.#cipher) return this.#cipher.open(sealedPlace(redisKey, order?.[1]), stored);
    if (stored.startsWith(SEALED_PREFIX)) {
      throw new UnreadableCacheValueError('sealed, but no key set');
    }
    return stored;
  }

  /**
   * One Lua script writes unless a later version stands. A stored value that claims a later
   * version but does not open (its version changed, or sealed by another key) is no fresher
   * value: it is replaced, unless another write replaced it first.
   */
  async writeIfNewer(key: string, entry: E, ttlMs: number): Promise<WriteOutcome> {
    const redisKey = this.#redisKey(key);
    const json = JSON.stringify({ value: entry, expires: this.#now() + ttlMs });
    const at = String(Math.floor(entry.fetchedAt ?? 0));
    const body = this.#cipher ? this.#cipher.seal(sealedPlace(redisKey, at), json) : json;
    const value = `m:${at}|${body}`;
    const ttl = String(Math.ceil(ttlMs));
    const reply = await this.#connection.script(WRITE_IF_NEWER, [redisKey], [value, at, ttl]);
    if (typeof reply !== 'string') return 'written';
    try {
      this.#open(redisKey, reply);
      return 'kept';
    } catch (error) {
      if (!(error instanceof UnreadableCacheValueError)) throw error;
    }
    const replaced = await this.#connection.script(
      REPLACE_IF_SAME,
      [redisKey],
      [reply, value, ttl],
    );
    return Number(replaced) === 1 ? 'replaced-unreadable' : 'kept';
  }

  async ping(): Promise<boolean> {
    return this.#connection.ping();
  }
}
