/**
 * The cache in Redis (`CACHE_URL`), through keyv and @keyv/redis, shared by every replica.
 *
 * Same policy as in memory: RecordCache stores `{ value, storedAt, freshUntil }` with a physical
 * TTL of ttl + keep (Redis `PX`), so final transactions outlive their freshness for stale
 * serving. Keys are `<prefix>:cache:tx:v2:<txRef>` and `<prefix>:cache:kyc:v2:<sha256>` (`v2`:
 * the record format; KYC keys are hashed by the sources; no person and no credential appears in
 * a key). Values are JSON (the normalized records of upstream/shapes.ts, as they are),
 * readable by any replica and after a restart; with `CACHE_ENCRYPTION_KEY` they are sealed
 * with AES-256-GCM, so that a read of Redis (a dump, a backup, a MONITOR) reveals no person.
 */
import KeyvRedis from '@keyv/redis';
import { Keyv } from 'keyv';
import type { CacheConfig } from '../config.ts';
import { luaScript, type RedisClient, type RedisConnection } from '../redis/connection.ts';
import { SEALED_PREFIX, Sealer, UnreadableCacheValueError } from './seal.ts';
import { type CachedEntry, type CacheObserver, type OrderedWriter, RecordCache } from './store.ts';

/**
 * Each value starts with its order in clear, `m:<fetchedAt>:<final 0|1>|`, so that a Lua script
 * can compare it with a write's without the key (the order reveals no person); the rest is the
 * JSON, sealed when a key is set. Values of older versions, without it, rank lowest.
 */
const ORDER = /^m:\d+:[01]\|/;

// KEYS: the record. ARGV: the value (with its order), fetchedAt, final (0|1), ttl ms.
// Writes unless the stored record outranks it (store.ts `outranks`): 1 written, 0 kept.
const WRITE_IF_NEWER = luaScript(`
local stored = redis.call('GET', KEYS[1])
if stored then
  local at, final = string.match(stored, '^m:(%d+):([01])|')
  if at then
    if final == '1' and ARGV[3] == '0' then return 0 end
    if tonumber(at) > tonumber(ARGV[2]) then return 0 end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
return 1
`);

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
    const stored = held.replace(ORDER, '');
    if (this.#cipher) return this.#cipher.open(this.#redisKey(key), stored) as U;
    if (stored.startsWith(SEALED_PREFIX))
      throw new UnreadableCacheValueError('sealed, but no key set');
    return stored as U;
  }

  override set(key: string, value: string, ttl?: number): Promise<void> {
    const stored = this.#cipher ? this.#cipher.seal(this.#redisKey(key), value) : value;
    return this.#connection.run(() => super.set(key, stored, ttl));
  }

  /** The compare-and-set of RecordCache.store, in one Lua script (atomic in Redis). */
  async writeIfNewer(key: string, entry: CachedEntry<unknown>, ttlMs: number): Promise<boolean> {
    // As keyv would store it: `{ value, expires }`, JSON.
    const json = JSON.stringify({ value: entry, expires: Date.now() + ttlMs });
    const body = this.#cipher ? this.#cipher.seal(this.#redisKey(key), json) : json;
    const at = String(Math.floor(entry.fetchedAt ?? 0));
    const final = entry.final ? '1' : '0';
    const reply = await this.#connection.script(
      WRITE_IF_NEWER,
      [this.#redisKey(key)],
      [`m:${at}:${final}|${body}`, at, final, String(Math.ceil(ttlMs))],
    );
    return Number(reply) === 1;
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
