/**
 * AES-256-GCM sealing with the cache key (`CACHE_ENCRYPTION_KEY`, rotation by
 * `CACHE_ENCRYPTION_OLD_KEYS`): the one place where the gateway encrypts what it puts in Redis —
 * records (state/records.ts), persisted documents (graphql/persisted.ts) and the messages
 * replicas exchange (live/messages.ts). Each sealed text is bound to its place, given as
 * associated data (a Redis key, a channel name), so a value copied elsewhere does not open.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** The key that writes, and the older ones still accepted for reading. */
export interface SealKeys {
  key: Buffer;
  oldKeys: Buffer[];
}

// `gwe1:<key id>:<base64url of IV ‖ ciphertext ‖ tag>`; JSON never starts like this.
export const SEALED_PREFIX = 'gwe1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed text that must not be used: sealed with an unknown key, altered, or clear. */
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
 * AES-256-GCM: a random IV per seal, the tag checked on every open, and the place (`aad`) as
 * additional authenticated data.
 */
export class Sealer {
  readonly #writeKey: Buffer;
  readonly #writeId: string;
  /** Every key that may read, by id (the writing one included). */
  readonly #keys: Map<string, Buffer>;

  constructor(keys: SealKeys) {
    this.#writeKey = keys.key;
    this.#writeId = keyId(keys.key);
    this.#keys = new Map(keys.oldKeys.map((key) => [keyId(key), key] as const));
    this.#keys.set(this.#writeId, keys.key);
  }

  seal(aad: string, text: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#writeKey, iv).setAAD(Buffer.from(aad));
    const body = Buffer.concat([
      iv,
      cipher.update(text, 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${SEALED_PREFIX}${this.#writeId}:${body.toString('base64url')}`;
  }

  /** The text sealed for `aad`; throws {@link UnreadableCacheValueError} otherwise. */
  open(aad: string, stored: string): string {
    if (!stored.startsWith(SEALED_PREFIX)) throw new UnreadableCacheValueError('not sealed');
    const [id = '', sealed, ...rest] = stored.slice(SEALED_PREFIX.length).split(':');
    const key = this.#keys.get(id);
    if (!key) throw new UnreadableCacheValueError('sealed with an unknown key');
    const body = Buffer.from(sealed ?? '', 'base64url');
    if (rest.length > 0 || body.length < IV_BYTES + TAG_BYTES) {
      throw new UnreadableCacheValueError('malformed');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES))
        .setAAD(Buffer.from(aad))
        .setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      // Altered, moved to another place, or sealed by another key with a clashing id.
      throw new UnreadableCacheValueError('authentication failed');
    }
  }
}
