/**
 * The cache in Redis (`CACHE_URL`), through keyv and @keyv/redis, shared by every replica.
 *
 * Same policy as in memory: RecordCache stores `{ value, storedAt, freshUntil }` with a physical
 * TTL of ttl + keep (Redis `PX`), so final transactions outlive their freshness for stale
 * serving. Keys are `<prefix>:cache:tx:v3:<txRef>` and `<prefix>:cache:kyc:v3:<sha256>` (`v3`:
 * the record format; KYC keys are hashed by the sources; no person and no credential appears in
 * a key). Values are JSON (the normalized records of upstream/shapes.ts, as they are),
 * readable by any replica and after a restart; with `CACHE_ENCRYPTION_KEY` they are sealed
 * with AES-256-GCM, so that a read of Redis (a dump, a backup, a MONITOR) reveals no person.
 */
import KeyvRedis from '@keyv/redis';
import { Keyv } from 'keyv';
import type { CacheConfig } from '../config.ts';
import type { RedisClient, RedisConnection } from '../state/redis.ts';
import { REPLACE_IF_SAME, WRITE_IF_NEWER } from '../state/scripts.ts';
import { SEALED_PREFIX, Sealer, UnreadableCacheValueError } from './seal.ts';
import {
  type CachedEntry,
  type CacheObserver,
  type OrderedWriter,
  RecordCache,
  type WriteOutcome,
} from './store.ts';

/** What the seal of a record is bound to: its Redis key and its order. */
function sealedPlace(redisKey: string, fetchedAt: string | undefined): string {
  return fetchedAt === undefined ? redisKey : `${redisKey}\u0000m:${fetchedAt}`;
}

/**
 * Each value starts with its order in clear, `m:<fetchedAt>|`, so that a Lua script can compare
 * it with a write's without the key (the order reveals no person); the rest is the JSON, sealed
 * when a key is set. The order is part of what the seal authenticates (its associated data, with
 * the Redis key): a value put back with its order changed does not open, and does not outrank a
 * fresh read either ({@link SharedClientStore.writeIfNewer}). Values of older versions (an order
 * `m:<fetchedAt>:<0|1>|`, or none) rank by their time alone, or lowest; sealed ones do not open.
 */
const ORDER = /^m:(\d+)(?::[01])?\|/;

/**
 * @keyv/redis over the connection the gateway owns: it neither opens nor closes it (the
 * connection's retry and timeouts rule, and the locks and live status share it).
 */
class SharedClientStore extends KeyvRedis<string> implements OrderedWriter {
  readonly #connection: RedisConnection;
  readonly #cipher: Sealer | undefined;

  constructor(connection: RedisConnection, cipher: Sealer | undefined) {
    super(connection.client);
    this.#connection = connection;
    this.#cipher = cipher;
  }

  // The adapter would otherwise connect a closed client itself, and destroy it when that
  // fails; here a command on a connection that is not ready fails at once instead.
  override async getClient(): Promise<RedisClient> {
    if (!this.#connection.isReady) throw new Error('Redis is not connected');
    return this.#connection.client;
  }

  // Every command the cache sends, bounded in time by the connection. A value that does not
  // open throws, and RecordCache counts it as a failed read: a miss, never served.
  override async get<U = string>(key: string): Promise<U | undefined> {
    const held = await this.#connection.run(() => super.get<string>(key));
    if (held === undefined) return undefined;
    return this.#open(this.#redisKey(key), held) as U;
  }

  /**
   * The JSON of a value as Redis holds it, its order checked: with a key, the order and the
   * Redis key are the seal's associated data, so a value moved, altered or put back with another
   * order throws. Without a key nothing is authenticated (docs/security.md says what a party
   * that can write to Redis can then do).
   */
  #open(redisKey: string, held: string): string {
    const order = ORDER.exec(held);
    const stored = order ? held.slice(order[0].length) : held;
    if (this.#cipher) return this.#cipher.open(sealedPlace(redisKey, order?.[1]), stored);
    if (stored.startsWith(SEALED_PREFIX))
      throw new UnreadableCacheValueError('sealed, but no key set');
    return stored;
  }

  override set(key: string, value: string, ttl?: number): Promise<void> {
    const stored = this.#cipher ? this.#cipher.seal(this.#redisKey(key), value) : value;
    return this.#connection.run(() => super.set(key, stored, ttl));
  }

  /**
   * The compare-and-set of RecordCache.store, in one Lua script (atomic in Redis). A stored value
   * that claims a later read but does not open (its order changed, or sealed by another key) is
   * no fresher record: it is replaced, unless another write replaced it first.
   */
  async writeIfNewer(
    key: string,
    entry: CachedEntry<unknown>,
    ttlMs: number,
  ): Promise<WriteOutcome> {
    const redisKey = this.#redisKey(key);
    // As keyv would store it: `{ value, expires }`, JSON.
    const json = JSON.stringify({ value: entry, expires: Date.now() + ttlMs });
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

  override delete(key: string): Promise<boolean> {
    return this.#connection.run(() => super.delete(key));
  }

  override async disconnect(): Promise<void> {}

  /** The name the value has in Redis, which the seal is bound to. */
  #redisKey(key: string): string {
    return this.createKeyPrefix(key, this.namespace);
  }
}

/**
 * Builds the Redis-backed cache. Errors (Redis down, a command timed out) surface to
 * RecordCache, which counts them and serves without the cache.
 */
export function createRedisCache(
  connection: RedisConnection,
  observe?: CacheObserver,
  encryption?: CacheConfig['encryption'],
) {
  const store = new SharedClientStore(connection, encryption && new Sealer(encryption));
  store.keyPrefixSeparator = ':';
  store.throwOnErrors = true;
  store.throwOnConnectError = true;
  const keyv = new Keyv<unknown>({
    store,
    namespace: connection.key('cache'),
    // The adapter prefixes with the namespace; keyv must not prefix a second time.
    useKeyPrefix: false,
    throwOnErrors: true,
  });
  // JSON: smaller and faster than keyv's default serializer, and what any reader expects.
  keyv.serialize = JSON.stringify;
  keyv.deserialize = (text: string) => JSON.parse(text);
  return new RecordCache(keyv, store, observe);
}
