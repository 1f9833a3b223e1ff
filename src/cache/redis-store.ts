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
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import KeyvRedis from '@keyv/redis';
import { Keyv } from 'keyv';
import type { CacheConfig } from '../config.ts';
import type { RedisClient, RedisConnection } from '../redis/connection.ts';
import { type CacheObserver, RecordCache } from './store.ts';

// `gwe1:<key id>:<base64url of IV ‖ ciphertext ‖ tag>`; JSON never starts like this.
const SEALED = 'gwe1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A value in Redis that must not be served: sealed with an unknown key, altered, or clear. */
export class UnreadableCacheValueError extends Error {
  constructor(reason: string) {
    super(`cache value not readable: ${reason}`);
    this.name = 'UnreadableCacheValueError';
  }
}

/**
 * Names a key in the values it sealed, so that a reader holding several (rotation) takes the
 * right one: 8 base64url characters of a SHA-256 of the key, which reveal nothing of it.
 */
function keyId(key: Buffer): string {
  return createHash('sha256')
    .update('gateway cache key id\0')
    .update(key)
    .digest('base64url')
    .slice(0, 8);
}

/**
 * AES-256-GCM over the cache's values: a random IV per write, the tag checked on every read,
 * and the Redis key as additional authenticated data, so that a value copied under another
 * key (another payment, another person) does not open.
 */
export class ValueCipher {
  readonly #writeKey: Buffer;
  readonly #writeId: string;
  /** Every key that may read, by id (the writing one included). */
  readonly #keys: Map<string, Buffer>;

  constructor(encryption: NonNullable<CacheConfig['encryption']>) {
    this.#writeKey = encryption.key;
    this.#writeId = keyId(encryption.key);
    this.#keys = new Map(encryption.oldKeys.map((key) => [keyId(key), key] as const));
    this.#keys.set(this.#writeId, encryption.key);
  }

  seal(redisKey: string, text: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#writeKey, iv).setAAD(Buffer.from(redisKey));
    const body = Buffer.concat([
      iv,
      cipher.update(text, 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${SEALED}${this.#writeId}:${body.toString('base64url')}`;
  }

  open(redisKey: string, stored: string): string {
    if (!stored.startsWith(SEALED)) throw new UnreadableCacheValueError('not sealed');
    const [id = '', sealed, ...rest] = stored.slice(SEALED.length).split(':');
    const key = this.#keys.get(id);
    if (!key) throw new UnreadableCacheValueError('sealed with an unknown key');
    const body = Buffer.from(sealed ?? '', 'base64url');
    if (rest.length > 0 || body.length < IV_BYTES + TAG_BYTES) {
      throw new UnreadableCacheValueError('malformed');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES))
        .setAAD(Buffer.from(redisKey))
        .setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      // Altered, moved under another key, or sealed by another key with a clashing id.
      throw new UnreadableCacheValueError('authentication failed');
    }
  }
}

/**
 * @keyv/redis over the connection the gateway owns: it neither opens nor closes it (the
 * connection's retry and timeouts rule, and the locks and live status share it).
 */
class SharedClientStore extends KeyvRedis<string> {
  readonly #connection: RedisConnection;
  readonly #cipher: ValueCipher | undefined;

  constructor(connection: RedisConnection, cipher: ValueCipher | undefined) {
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
    const stored = await this.#connection.run(() => super.get<string>(key));
    if (stored === undefined) return undefined;
    if (this.#cipher) return this.#cipher.open(this.#redisKey(key), stored) as U;
    if (stored.startsWith(SEALED)) throw new UnreadableCacheValueError('sealed, but no key set');
    return stored as U;
  }

  override set(key: string, value: string, ttl?: number): Promise<void> {
    const stored = this.#cipher ? this.#cipher.seal(this.#redisKey(key), value) : value;
    return this.#connection.run(() => super.set(key, stored, ttl));
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
  const store = new SharedClientStore(connection, encryption && new ValueCipher(encryption));
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
  return new RecordCache(keyv, observe);
}
