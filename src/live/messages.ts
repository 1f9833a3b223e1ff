/**
 * The messages replicas exchange on a live channel (`<prefix>:live:{<ref>}:events`), and the ONE
 * pair of functions every such message goes through: {@link LiveMessages.seal} before
 * `PUBLISH`, {@link LiveMessages.open} on receipt.
 *
 * With `CACHE_ENCRYPTION_KEY` every message is sealed like a stored record (cache/seal.ts:
 * AES-256-GCM, the channel name as associated data, old keys accepted for rotation): a party
 * that can publish on Redis but lacks the key cannot make a subscriber see anything, and a
 * message copied from another channel does not open. Without a key, messages are clear JSON and
 * carry no personal data at all: a changed record is announced by its channel alone
 * (`{ t: 'changed' }`) and each receiver reads the record from the cache, which the poller
 * wrote before publishing — so a forged message can make a replica read the cache, never show
 * a record. Each message carries its time (`at`): one older than a minute (a sealed message
 * captured and replayed) is dropped too. A message that does not open, has the wrong shape or is
 * stale is dropped and counted (`gateway_live_messages_rejected_total`).
 */
import { SEALED_PREFIX, Sealer, type SealKeys } from '../cache/seal.ts';
import { ErrorCode } from '../errors.ts';
import { RECORD_FORMAT } from '../model/records.ts';
import type { LiveRecord } from './hub.ts';

/** Why a message was dropped (the metric's label). */
export type RejectReason = 'unauthenticated' | 'malformed' | 'stale';

/**
 * How far a message's time (`at`, set by {@link LiveMessages.seal}) may lie from the receiver's
 * clock: a sealed message captured on Redis and published again later is dropped.
 */
export const MESSAGE_MAX_AGE_MS = 60_000;

/** Everything that may travel on a live channel. */
export type LiveMessage =
  /** The elected poller is alive; `since`: start of the poll sequence (epoch ms). */
  | { t: 'beat'; owner: string; since: number }
  /**
   * A new record (sealed messages only: a record holds personal data); `f`: its form
   * (RECORD_FORMAT); `pushedAt`: when the notification that fetched it arrived (a pushed record,
   * not a poll).
   */
  | { t: 'record'; owner: string; record: LiveRecord; f: string; pushedAt?: number }
  /** A new record was stored; read it from the cache (clear messages). */
  | { t: 'changed'; owner: string; pushedAt?: number }
  /** The watch ended with an error. */
  | { t: 'error'; owner: string; code: ErrorCode; message: string };

const CODES = new Set<string>(Object.values(ErrorCode));
const MAX_TEXT = 500;

function isShortString(value: unknown, max = 100): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

function validPushedAt(value: unknown): boolean {
  return value === undefined || Number.isFinite(value);
}

/** Encodes and decodes live messages; built once per process from the cache key. */
export class LiveMessages {
  readonly #sealer: Sealer | undefined;
  readonly #rejected: (reason: RejectReason) => void;

  constructor(keys: SealKeys | undefined, rejected: (reason: RejectReason) => void) {
    this.#sealer = keys && new Sealer(keys);
    this.#rejected = rejected;
  }

  /** True when messages are encrypted and authenticated, and so may carry records. */
  get sealed(): boolean {
    return this.#sealer !== undefined;
  }

  /** The text to publish on `channel`. A record message needs a key (see {@link sealed}). */
  seal(channel: string, message: LiveMessage): string {
    const text = JSON.stringify({ ...message, at: Date.now() });
    if (!this.#sealer) {
      if (message.t === 'record') throw new Error('a record is never sent in clear');
      return text;
    }
    return this.#sealer.seal(channel, text);
  }

  /** The message received on `channel`, or undefined (dropped and counted). */
  open(channel: string, text: string): LiveMessage | undefined {
    const value = this.#decode(channel, text);
    if (!value) return undefined;
    return this.#valid(value) ?? this.#reject('malformed');
  }

  /**
   * Any other message between replicas that may carry personal data (graphql-sse's relayed
   * operations and answers): sealed for `channel` with its time, as a record is; undefined
   * without a key, since such a message never travels clear.
   */
  sealPrivate(channel: string, message: Record<string, unknown>): string | undefined {
    if (!this.#sealer) return undefined;
    return this.#sealer.seal(channel, JSON.stringify({ ...message, at: Date.now() }));
  }

  /**
   * The object sealed by {@link sealPrivate} for `channel`, if it opens and is fresh; its shape
   * is the receiver's to check. Undefined (dropped and counted) otherwise.
   */
  openPrivate(channel: string, text: string): Record<string, unknown> | undefined {
    if (!this.#sealer) return this.#reject('unauthenticated');
    return this.#decode(channel, text);
  }

  /** Opens (or, without a key, reads) a message: a fresh JSON object, or undefined (counted). */
  #decode(channel: string, text: string): Record<string, unknown> | undefined {
    let json: string;
    if (this.#sealer) {
      try {
        json = this.#sealer.open(channel, text);
      } catch {
        return this.#reject('unauthenticated');
      }
    } else {
      if (text.startsWith(SEALED_PREFIX)) return this.#reject('unauthenticated');
      json = text;
    }
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      return this.#reject('malformed');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return this.#reject('malformed');
    }
    const { at } = value as { at?: unknown };
    if (typeof at !== 'number' || Math.abs(Date.now() - at) > MESSAGE_MAX_AGE_MS) {
      return this.#reject('stale');
    }
    return value as Record<string, unknown>;
  }

  #reject(reason: RejectReason): undefined {
    this.#rejected(reason);
    return undefined;
  }

  #valid(message: Record<string, unknown>): LiveMessage | undefined {
    if (!isShortString(message.owner)) return undefined;
    switch (message.t) {
      case 'beat':
        return Number.isFinite(message.since) ? (message as LiveMessage) : undefined;
      case 'changed':
        return validPushedAt(message.pushedAt) ? (message as LiveMessage) : undefined;
      case 'record':
        // Only an authenticated message may carry a record (sealed by a replica holding the key).
        if (
          !this.#sealer ||
          typeof message.record !== 'object' ||
          message.record === null ||
          !validPushedAt(message.pushedAt)
        ) {
          return undefined;
        }
        // A record in another form (a replica of another version, during a rolling deploy) is
        // not taken as it is: the receiver reads it again, as for a `changed` message.
        if (message.f !== RECORD_FORMAT) {
          return {
            t: 'changed',
            owner: message.owner,
            ...(message.pushedAt !== undefined && { pushedAt: message.pushedAt as number }),
          };
        }
        return message as LiveMessage;
      case 'error':
        return typeof message.code === 'string' &&
          CODES.has(message.code) &&
          isShortString(message.message, MAX_TEXT)
          ? (message as LiveMessage)
          : undefined;
      default:
        return undefined;
    }
  }
}
