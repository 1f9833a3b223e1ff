/**
 * A fair share of upstream concurrency per caller: one caller has at most its class's limit of
 * upstream calls in flight in this process (an end user's token, or a service's, which sends a
 * merchant backend's many requests at once); its further calls wait in its own queue (at most `maxQueued`,
 * beyond which they are refused at once) before they may take a slot of the shared bulkhead.
 * So one caller's request of a hundred references cannot fill the slots and queue that every
 * other caller's calls need. A caller's entry is dropped as soon as it is idle.
 */
import { type UpstreamName, UpstreamUnavailableError } from '../errors.ts';

/** The classes of callers, as for rate limits: tokens without scopes, and with. */
export type CallerKind = 'endUser' | 'service';

interface CallerState {
  active: number;
  waiting: Array<() => void>;
}

export class CallerShare {
  readonly #limits: Record<CallerKind, number>;
  readonly #maxQueued: number;
  readonly #callers = new Map<string, CallerState>();

  constructor(limits: Record<CallerKind, number>, maxQueued: number) {
    this.#limits = limits;
    this.#maxQueued = maxQueued;
  }

  /** Callers with calls in flight or waiting (for tests and metrics). */
  get callers(): number {
    return this.#callers.size;
  }

  /** Runs `work` within the share of `caller` (of class `kind`) of the `upstream`'s concurrency. */
  run<T>(
    caller: string,
    kind: CallerKind,
    upstream: UpstreamName,
    work: () => Promise<T>,
  ): Promise<T> {
    let state = this.#callers.get(caller);
    if (!state) {
      state = { active: 0, waiting: [] };
      this.#callers.set(caller, state);
    }
    if (state.active < this.#limits[kind]) {
      state.active += 1;
      return this.#holding(caller, state, work);
    }
    if (state.waiting.length >= this.#maxQueued) {
      return Promise.reject(
        new UpstreamUnavailableError(upstream, 'too many calls in flight for this caller'),
      );
    }
    // The slot is handed over by the call that ends (active is not decremented then).
    const queued = state;
    return new Promise<void>((resolve) => queued.waiting.push(resolve)).then(() =>
      this.#holding(caller, queued, work),
    );
  }

  /** Runs `work` in a slot already taken, and passes the slot on (or frees it) when it settles. */
  #holding<T>(caller: string, state: CallerState, work: () => Promise<T>): Promise<T> {
    let running: Promise<T>;
    try {
      running = work();
    } catch (error) {
      running = Promise.reject(error);
    }
    const release = () => {
      const next = state.waiting.shift();
      if (next) next();
      else {
        state.active -= 1;
        if (state.active === 0) this.#callers.delete(caller);
      }
    };
    running.then(release, release);
    return running;
  }
}
