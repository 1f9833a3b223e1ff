/**
 * Leases: the one lock protocol of the gateway. A lease on a name is held by one holder at a
 * time, for a hold it renews, and lapses when its holder stops renewing it (it died, or lost its
 * way): then another takes it over. A holder gives it back only while it is still its own (after
 * a slow holder it may belong to another).
 *
 * A lease can also be asked for again: `ask` says "one more round, please" to whoever holds it,
 * and the holder gives the lease back only when no one asked since it began its round
 * ({@link Lease.releaseUnlessAsked}, one atomic step), so a request is never lost between the
 * holder's last look and its release.
 *
 * In memory, a lease is a map entry on an injected clock (a cluster of one); in Redis,
 * `SET <name> <token> NX PX <hold>` takes it and a script gives it back. The flag of a name sits
 * beside it (`<name>:asked`), in the same hash slot: a name is tagged `{…}` as a whole on a
 * cluster. Failures throw ({@link RedisUnavailableError}); the caller acts locally and counts it.
 */
import { randomUUID } from 'node:crypto';
import type { RedisConnection } from './redis.ts';
import { RELEASE_LEASE, RELEASE_UNLESS_ASKED, RENEW_LEASE } from './scripts.ts';

/** A lease held. */
export interface Lease {
  /** Holds it `holdMs` more; false when it lapsed and another holds it now (or no one). */
  renew(holdMs: number): Promise<boolean>;
  /** Gives it back, when still held by this holder. */
  release(): Promise<void>;
  /** Clears the flag: the round about to begin answers every ask made so far. */
  beginRound(): Promise<void>;
  /**
   * Gives it back unless someone asked since the last {@link beginRound}; then keeps it for
   * `holdMs` more and returns false (one more round is due).
   */
  releaseUnlessAsked(holdMs: number): Promise<boolean>;
}

/** Leases on names. */
export interface Leases {
  /** Takes the lease on `name` for `holdMs` when no one holds it; undefined when another does. */
  take(name: string, holdMs: number): Promise<Lease | undefined>;
  /** Asks the holder of `name` for one more round (the flag lapses after `holdMs`). */
  ask(name: string, holdMs: number): Promise<void>;
  /** What is true of `name` now: held by anyone, and asked for since the holder's round began. */
  look(name: string): Promise<{ held: boolean; asked: boolean }>;
}

interface Entry {
  token: string;
  until: number;
}

/** Leases of this process alone, on the clock `now`. */
export class MemoryLeases implements Leases {
  readonly #held = new Map<string, Entry>();
  readonly #asked = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = () => Date.now()) {
    this.#now = now;
  }

  #live<V extends Entry | number>(map: Map<string, V>, name: string): V | undefined {
    const value = map.get(name);
    if (value === undefined) return undefined;
    const until = typeof value === 'number' ? value : value.until;
    if (until > this.#now()) return value;
    map.delete(name);
    return undefined;
  }

  async take(name: string, holdMs: number): Promise<Lease | undefined> {
    if (this.#live(this.#held, name)) return undefined;
    const token = randomUUID();
    this.#held.set(name, { token, until: this.#now() + holdMs });
    const mine = (): Entry | undefined => {
      const entry = this.#live(this.#held, name);
      return entry?.token === token ? entry : undefined;
    };
    return {
      renew: async (ms) => {
        const entry = mine();
        if (entry) entry.until = this.#now() + ms;
        return entry !== undefined;
      },
      release: async () => {
        if (mine()) this.#held.delete(name);
      },
      beginRound: async () => {
        this.#asked.delete(name);
      },
      releaseUnlessAsked: async (ms) => {
        const entry = mine();
        if (!entry) return true;
        if (this.#live(this.#asked, name) !== undefined) {
          entry.until = this.#now() + ms;
          return false;
        }
        this.#held.delete(name);
        return true;
      },
    };
  }

  async ask(name: string, holdMs: number): Promise<void> {
    this.#asked.set(name, this.#now() + holdMs);
  }

  async look(name: string): Promise<{ held: boolean; asked: boolean }> {
    return {
      held: this.#live(this.#held, name) !== undefined,
      asked: this.#live(this.#asked, name) !== undefined,
    };
  }
}

/** Leases in Redis, shared by every replica (expiry on Redis's clock). */
export class RedisLeases implements Leases {
  readonly #redis: RedisConnection;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
  }

  /** The lease's key and its flag's, in one hash slot. */
  #keys(name: string): { lease: string; asked: string } {
    const lease = this.#redis.key(`{${name}}`);
    return { lease, asked: `${lease}:asked` };
  }

  async take(name: string, holdMs: number): Promise<Lease | undefined> {
    const { lease, asked } = this.#keys(name);
    const token = randomUUID();
    const redis = this.#redis;
    const reply = await redis.run((client) =>
      client.set(lease, token, { condition: 'NX', expiration: { type: 'PX', value: holdMs } }),
    );
    if (reply !== 'OK') return undefined;
    return {
      renew: async (ms) =>
        Number(await redis.script(RENEW_LEASE, [lease], [token, String(ms)])) === 1,
      release: async () => {
        await redis.script(RELEASE_LEASE, [lease], [token]);
      },
      beginRound: async () => {
        await redis.run((client) => client.del(asked));
      },
      releaseUnlessAsked: async (ms) =>
        Number(await redis.script(RELEASE_UNLESS_ASKED, [lease, asked], [token, String(ms)])) === 1,
    };
  }

  async ask(name: string, holdMs: number): Promise<void> {
    const { asked } = this.#keys(name);
    await this.#redis.run((client) =>
      client.set(asked, '1', { expiration: { type: 'PX', value: holdMs } }),
    );
  }

  async look(name: string): Promise<{ held: boolean; asked: boolean }> {
    const { lease, asked } = this.#keys(name);
    const [held, wanted] = await this.#redis.run((client) =>
      Promise.all([client.exists(lease), client.exists(asked)]),
    );
    return { held: held === 1, asked: wanted === 1 };
  }
}
