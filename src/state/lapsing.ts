/**
 * Sets whose members lapse: each member is held until its expiry unless renewed, so the members
 * of a replica that died leave by themselves. Adding may be bounded (at most `most` live
 * members: a quota of long-lived things per caller). In memory: maps on an injected clock. In
 * Redis: a sorted set per set, scored by each member's expiry on Redis's clock; adding drops the
 * lapsed members, counts and adds in one script. Failures throw; the caller acts locally and
 * counts it.
 */
import type { RedisConnection } from './redis.ts';
import { RENEW_SLOT, TAKE_SLOT } from './scripts.ts';

export interface LapsingSets {
  /** Adds `member` to `set` until now + `ttlMs` if fewer than `most` live members; else false. */
  add(set: string, member: string, ttlMs: number, most: number): Promise<boolean>;
  /** Holds a member `ttlMs` more from now (one already lapsed stays gone). */
  renew(set: string, member: string, ttlMs: number): Promise<void>;
  remove(set: string, member: string): Promise<void>;
  /** Live members of `set`. */
  count(set: string): Promise<number>;
}

/** Sets of this process alone. */
export class MemoryLapsingSets implements LapsingSets {
  readonly #sets = new Map<string, Map<string, number>>();
  readonly #now: () => number;

  constructor(now: () => number = () => Date.now()) {
    this.#now = now;
  }

  /** The set with its lapsed members dropped (and forgotten when empty). */
  #live(set: string): Map<string, number> {
    const members = this.#sets.get(set) ?? new Map<string, number>();
    const now = this.#now();
    for (const [member, until] of members) if (until <= now) members.delete(member);
    if (members.size === 0) this.#sets.delete(set);
    return members;
  }

  async add(set: string, member: string, ttlMs: number, most: number): Promise<boolean> {
    const members = this.#live(set);
    if (members.size >= most) return false;
    members.set(member, this.#now() + ttlMs);
    this.#sets.set(set, members);
    return true;
  }

  async renew(set: string, member: string, ttlMs: number): Promise<void> {
    const members = this.#live(set);
    if (members.has(member)) members.set(member, this.#now() + ttlMs);
  }

  async remove(set: string, member: string): Promise<void> {
    const members = this.#live(set);
    members.delete(member);
    if (members.size === 0) this.#sets.delete(set);
  }

  async count(set: string): Promise<number> {
    return this.#live(set).size;
  }
}

/** Sets in Redis, for every replica. */
export class RedisLapsingSets implements LapsingSets {
  readonly #redis: RedisConnection;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
  }

  async add(set: string, member: string, ttlMs: number, most: number): Promise<boolean> {
    const reply = await this.#redis.script(
      TAKE_SLOT,
      [this.#redis.key(set)],
      [String(most), member, String(ttlMs)],
    );
    return Number(reply) === 1;
  }

  async renew(set: string, member: string, ttlMs: number): Promise<void> {
    await this.#redis.script(RENEW_SLOT, [this.#redis.key(set)], [member, String(ttlMs)]);
  }

  async remove(set: string, member: string): Promise<void> {
    await this.#redis.run((client) => client.zRem(this.#redis.key(set), member));
  }

  async count(set: string): Promise<number> {
    // TAKE_SLOT with no room drops the lapsed members and adds nothing; ZCARD then counts.
    const key = this.#redis.key(set);
    await this.#redis.script(TAKE_SLOT, [key], ['0', '', '1']);
    return this.#redis.run((client) => client.zCard(key));
  }
}
