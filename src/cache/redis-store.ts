/**
 * The cache in Redis (`CACHE_URL`), through keyv and @keyv/redis, shared by every replica.
 *
 * Same policy as in memory: RecordCache stores `{ value, storedAt, freshUntil }` with a physical
 * TTL of ttl + keep (Redis `PX`), so final transactions outlive their freshness for stale
 * serving. Keys are `<prefix>:cache:tx:<txRef>` and `<prefix>:cache:kyc:<sha256>` (KYC keys are
 * hashed by the sources; no person and no credential appears in a key). Values are plain JSON,
 * readable by any replica and after a restart.
 */
import KeyvRedis from '@keyv/redis';
import { Keyv } from 'keyv';
import type { RedisClient, RedisConnection } from '../redis/connection.ts';
import { type CacheObserver, RecordCache } from './store.ts';

/**
 * @keyv/redis over the connection the gateway owns: it neither opens nor closes it (the
 * connection's retry and timeouts rule, and the locks and live status share it).
 */
class SharedClientStore extends KeyvRedis<string> {
  readonly #connection: RedisConnection;

  constructor(connection: RedisConnection) {
    super(connection.client);
    this.#connection = connection;
  }

  // The adapter would otherwise connect a closed client itself, and destroy it when that
  // fails; here a command on a connection that is not ready fails at once instead.
  override async getClient(): Promise<RedisClient> {
    if (!this.#connection.isReady) throw new Error('Redis is not connected');
    return this.#connection.client;
  }

  // Every command the cache sends, bounded in time by the connection.
  override get<U = string>(key: string): Promise<U | undefined> {
    return this.#connection.run(() => super.get<U>(key));
  }

  override set(key: string, value: string, ttl?: number): Promise<void> {
    return this.#connection.run(() => super.set(key, value, ttl));
  }

  override delete(key: string): Promise<boolean> {
    return this.#connection.run(() => super.delete(key));
  }

  override async disconnect(): Promise<void> {}
}

/**
 * Builds the Redis-backed cache. Errors (Redis down, a command timed out) surface to
 * RecordCache, which counts them and serves without the cache.
 */
export function createRedisCache(connection: RedisConnection, observe?: CacheObserver) {
  const store = new SharedClientStore(connection);
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
  // Plain JSON: smaller and faster than keyv's default serializer, and what any reader expects.
  keyv.serialize = JSON.stringify;
  keyv.deserialize = (text: string) => JSON.parse(text);
  return new RecordCache(keyv, observe);
}
