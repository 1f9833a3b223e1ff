/**
 * Documents registered by clients (persisted queries), bounded in bytes for the whole cluster,
 * the least recently used dropped first. In Redis: one key per document with no TTL (so that
 * Redis's own eviction, under a `volatile-*` policy, never picks them and they never push out
 * records, counters or leases), a sorted set of last uses and a byte counter, kept together by
 * one script (`REGISTER_DOCUMENT`). In memory: nothing is shared, so nothing is kept here — the
 * process's own bounded store in front of this one is all there is (a cluster of one). Values
 * are stored as given (the caller seals them for {@link SharedDocuments.name}). Failures throw;
 * the caller acts locally and counts it.
 */
import type { RedisConnection } from './redis.ts';
import { REGISTER_DOCUMENT } from './scripts.ts';

/** What a registration did. */
export type Registered = 'stored' | 'known' | 'too-large';

export interface SharedDocuments {
  /** The full name of a document's key: what its value is sealed for. */
  name(hash: string): string;
  /** The stored value of the document `hash`, or undefined. */
  get(hash: string): Promise<string | undefined>;
  /** Marks a document that is kept used at `at` (epoch ms). */
  touch(hash: string, at: number): Promise<void>;
  /**
   * Stores `value` for `hash` (used at `at`) and drops the least recently used documents while
   * over `mostBytes`; `replace` stores over a value kept already (one that did not open).
   */
  register(
    hash: string,
    value: string,
    at: number,
    mostBytes: number,
    replace: boolean,
  ): Promise<Registered>;
}

/** This process alone: kept by the caller's own store, so none here. */
export const memoryDocuments: SharedDocuments = {
  name: (hash) => hash,
  get: async () => undefined,
  touch: async () => undefined,
  register: async () => 'stored',
};

const REPLIES: Record<number, Registered> = { 0: 'too-large', 1: 'stored', 2: 'known' };

/** Documents in Redis, for every replica. */
export class RedisDocuments implements SharedDocuments {
  readonly #redis: RedisConnection;
  readonly #lru: string;
  readonly #bytes: string;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
    this.#lru = redis.key('{apq}', 'lru');
    this.#bytes = redis.key('{apq}', 'bytes');
  }

  name(hash: string): string {
    return this.#redis.key('{apq}', 'doc', hash);
  }

  async get(hash: string): Promise<string | undefined> {
    const key = this.name(hash);
    return (await this.#redis.run((client) => client.get(key))) ?? undefined;
  }

  async touch(hash: string, at: number): Promise<void> {
    await this.#redis.run((client) =>
      client.zAdd(this.#lru, { score: at, value: hash }, { XX: true }),
    );
  }

  async register(
    hash: string,
    value: string,
    at: number,
    mostBytes: number,
    replace: boolean,
  ): Promise<Registered> {
    const reply = await this.#redis.script(
      REGISTER_DOCUMENT,
      [this.name(hash), this.#lru, this.#bytes],
      [value, String(at), String(mostBytes), hash, this.name(''), replace ? '1' : '0'],
    );
    return REPLIES[Number(reply)] ?? 'stored';
  }
}
