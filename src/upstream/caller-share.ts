/**
 * A fair share of upstream concurrency per caller: one caller has at most its class's limit of
 * upstream calls in flight in this process (an end user's token, or a service's, which sends a
 * merchant backend's many requests at once); its further calls wait in its own queue (at most `maxQueued`,
 * beyond which they are refused at once) before they may take a slot of the shared bulkhead.
 * So one caller's request of a hundred references cannot fill the slots and queue that every
 * other caller's calls need. A caller's entry is dropped as soon as it is idle.
 *
 * A waiting call whose requests have all ended (their clients gone) leaves the queue at once and
 * is never made: it neither reaches the upstream nor holds a place that a live request needs. A
 * call already in flight runs to its end (its answer still fills the cache).
 */
import { type UpstreamName, UpstreamUnavailableError } from '../errors.ts';

/** The classes of callers, as for rate limits: tokens without scopes, and with. */
export type CallerKind = 'endUser' | 'service';

interface CallerState {
  active: number;
  /**
   * The calls waiting, each by the function that hands it the slot; in arrival order, and a call
   * abandoned while waiting is deleted from anywhere in it.
   */
  waiting: Set<() => void>;
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

  /**
   * Runs `work` within the share of `caller` (of class `kind`) of the `upstream`'s concurrency.
   * `abandoned` is asked only when the call has to wait: once its signal aborts, the call leaves
   * the queue and rejects with the signal's reason, `work` never run.
   */
  run<T>(
    caller: string,
    kind: CallerKind,
    upstream: UpstreamName,
    work: () => Promise<T>,
    abandoned?: () => AbortSignal,
  ): Promise<T> {
    let state = this.#callers.get(caller);
    if (!state) {
      state = { active: 0, waiting: new Set() };
      this.#callers.set(caller, state);
    }
    if (state.active < this.#limits[kind]) {
      state.active += 1;
      return this.#holding(caller, state, work);
    }
    if (state.waiting.size >= this.#maxQueued) {
      return Promise.reject(
        new UpstreamUnavailableError(upstream, 'too many calls in flight for this caller'),
      );
    }
    // The slot is handed over by the call that ends (active is not decremented then).
    const queued = state;
    return new Promise<T>((resolve, reject) => {
      const signal = abandoned?.();
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const leave = () => {
        queued.waiting.delete(start);
        reject(signal?.reason);
      };
      const start = () => {
        signal?.removeEventListener('abort', leave);
        this.#holding(caller, queued, work).then(resolve, reject);
      };
      signal?.addEventListener('abort', leave, { once: true });
      queued.waiting.add(start);
    });
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
      if (state.waiting.size > 0) {
        const next = state.waiting.values().next().value as () => void;
        state.waiting.delete(next);
        next();
      } else {
        state.active -= 1;
        if (state.active === 0) this.#callers.delete(caller);
      }
    };
    running.then(release, release);
    return running;
  }
}
