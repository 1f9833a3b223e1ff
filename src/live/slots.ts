/**
 * Live subscriptions held per caller (`LIVE_MAX_PER_CALLER`): in this process, or across every
 * replica through Redis when `CACHE_URL` is set.
 *
 * In Redis, a caller's slots are one sorted set: a member per held watch, scored by when it
 * lapses (Redis's clock). Taking a slot drops lapsed members, counts and adds, atomically (one
 * script); a held slot is renewed every third of its lifetime, so the slots of a replica that
 * crashed lapse within {@link SLOT_TTL_MS} and cannot leak. When Redis fails, the process
 * counts on its own (each replica then allows the limit: served without it, never refused).
 */
import { randomUUID } from 'node:crypto';
import { hashedKeyPart, type RedisConnection } from '../state/redis.ts';
import { RENEW_SLOT, TAKE_SLOT } from '../state/scripts.ts';

/** Gives a caller's slot back (once; later calls do nothing). */
export type Release = () => void;

export interface LiveSlots {
  /** A slot for `caller` if it holds fewer than `max`; undefined otherwise. */
  take(caller: string, max: number): Promise<Release | undefined>;
}

/**
 * Slots per caller counted in this process (live watches here; WebSocket connections and
 * graphql-sse reservations in src/transports/connections.ts). Entries leave at zero.
 */
export class CallerSlots {
  readonly #held = new Map<string, number>();
  #total = 0;

  /** A slot for `caller` if it holds fewer than `max`, as the function that gives it back. */
  take(caller: string, max: number): Release | undefined {
    const held = this.#held.get(caller) ?? 0;
    if (held >= max) return undefined;
    this.#held.set(caller, held + 1);
    this.#total += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#total -= 1;
      const left = (this.#held.get(caller) ?? 1) - 1;
      if (left > 0) this.#held.set(caller, left);
      else this.#held.delete(caller);
    };
  }

  /** Slots `caller` holds now. */
  held(caller: string): number {
    return this.#held.get(caller) ?? 0;
  }

  /** Slots held, all callers together. */
  get total(): number {
    return this.#total;
  }
}

/** Live slots counted in this process. */
export class MemoryLiveSlots implements LiveSlots {
  readonly #slots = new CallerSlots();

  async take(caller: string, max: number): Promise<Release | undefined> {
    return this.#slots.take(caller, max);
  }
}

/** How long a slot lives in Redis without being renewed. */
export const SLOT_TTL_MS = 30_000;

/** Slots counted in Redis, for every replica together. */
export class RedisLiveSlots implements LiveSlots {
  readonly #redis: RedisConnection;
  readonly #local = new CallerSlots();
  readonly #ttlMs: number;

  constructor(redis: RedisConnection, ttlMs = SLOT_TTL_MS) {
    this.#redis = redis;
    this.#ttlMs = ttlMs;
  }

  async take(caller: string, max: number): Promise<Release | undefined> {
    const key = this.#redis.key('live-slots', hashedKeyPart(caller));
    const id = randomUUID();
    const ttl = String(this.#ttlMs);
    let taken: unknown;
    try {
      taken = await this.#redis.script(TAKE_SLOT, [key], [String(max), id, ttl]);
    } catch {
      this.#redis.failed('live_slots');
      return this.#local.take(caller, max);
    }
    if (Number(taken) !== 1) return undefined;
    const renew = setInterval(() => {
      this.#redis
        .script(RENEW_SLOT, [key], [id, ttl])
        .catch(() => this.#redis.failed('live_slots'));
    }, this.#ttlMs / 3);
    renew.unref();
    let given = false;
    return () => {
      if (given) return;
      given = true;
      clearInterval(renew);
      this.#redis
        .run((client) => client.zRem(key, id))
        .catch(() => this.#redis.failed('live_slots'));
    };
  }
}
