/**
 * Live subscriptions held per caller (`LIVE_MAX_PER_CALLER`): in this process, or across every
 * replica through Redis when `CACHE_URL` is set.
 *
 * Shared, a caller's slots are one of the state's lapsing sets: a member per held watch, until
 * it lapses. Taking a slot drops lapsed members, counts and adds, atomically; a held slot is
 * renewed every third of its lifetime, so the slots of a replica that crashed lapse within
 * {@link SLOT_TTL_MS} and cannot leak. When Redis fails, the process
 * counts on its own (each replica then allows the limit: served without it, never refused).
 */
import { randomUUID } from 'node:crypto';
import type { SharedState } from '../state/index.ts';
import { hashedKeyPart } from '../state/index.ts';
import { type LiveClock, systemClock } from './hub.ts';

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

/** How long a slot lives in Redis without being renewed. */
export const SLOT_TTL_MS = 30_000;

/**
 * Slots counted in the state's lapsing sets (state/lapsing.ts): with Redis, for every replica
 * together. A held slot is renewed every third of its lifetime; when the store fails, the
 * process counts on its own (`live_slots`).
 */
export class SharedLiveSlots implements LiveSlots {
  readonly #state: SharedState;
  readonly #local = new CallerSlots();
  readonly #ttlMs: number;
  readonly #clock: LiveClock;

  constructor(state: SharedState, ttlMs = SLOT_TTL_MS, clock: LiveClock = systemClock) {
    this.#state = state;
    this.#ttlMs = ttlMs;
    this.#clock = clock;
  }

  async take(caller: string, max: number): Promise<Release | undefined> {
    const { lapsing } = this.#state;
    const set = `live-slots:${hashedKeyPart(caller)}`;
    const id = randomUUID();
    const taken = await this.#state.orLocally<boolean | Release | undefined>(
      'live_slots',
      () => lapsing.add(set, id, this.#ttlMs, max),
      () => this.#local.take(caller, max),
    );
    if (typeof taken === 'function' || taken === undefined) return taken;
    if (!taken) return undefined;
    const quietly = (work: () => Promise<void>) =>
      void this.#state.orLocally('live_slots', work, () => undefined);
    const stopRenewing = this.#clock.every(this.#ttlMs / 3, () =>
      quietly(() => lapsing.renew(set, id, this.#ttlMs)),
    );
    let given = false;
    return () => {
      if (given) return;
      given = true;
      stopRenewing();
      quietly(() => lapsing.remove(set, id));
    };
  }
}
