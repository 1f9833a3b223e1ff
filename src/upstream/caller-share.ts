/**
 * A fair share of upstream concurrency per caller: one caller has at most its class's limit of
 * upstream calls in flight in this process (an end user's token, or a service's, which sends a
 * merchant backend's many requests at once); its further calls wait in its own queue (at most `maxQueued`,
 * beyond which they are refused at once) before they may take a slot of the shared bulkhead.
 * So one caller's request of a hundred references cannot fill the slots and queue that every
 * other caller's calls need. A caller's entry is dropped as soon as it is idle.
 *
 * A waiting call whose requests have all ended (their clients gone) is never made: it is dropped
 * when its turn comes, or as soon as its place in the queue is wanted by another call, so it
 * neither reaches the upstream nor holds a place that a live request needs. Whether it is still
 * wanted is asked at those moments only: a call waits at no cost. A call already in flight runs
 * to its end (its answer still fills the cache). The wait counts toward the read's time budget,
 * which the record sources start before it (see UpstreamHttp.get's `since`).
 */
import { type UpstreamName, UpstreamUnavailableError } from '../errors.ts';

/** The classes of callers, as for rate limits: tokens without scopes, and with. */
export type CallerKind = 'endUser' | 'service';

/** What a call that was dropped while waiting rejects with (no request sees it). */
export const CALL_DROPPED = new DOMException(
  'No request waits for this call any more.',
  'AbortError',
);

/** A call waiting for a slot: what it runs, how it settles, and whether it is still wanted. */
interface Waiting {
  work: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
  /** Whether no request waits for it any more. */
  gone: (() => boolean) | undefined;
}

interface CallerState {
  active: number;
  /** The calls waiting, in arrival order; one dropped is deleted from anywhere in it. */
  waiting: Set<Waiting>;
  /** When its full queue was last looked through for calls nobody waits for (ms). */
  sweptAt: number;
  /**
   * Passes the slot of a call that settled on to the next call still wanted, or frees it: one
   * function per caller, not one per call.
   */
  release: () => void;
}

/**
 * How often a full queue is looked through, at most (ms): a caller that keeps its queue full of
 * live calls and sends more is refused without a look through the whole queue each time.
 */
export const SWEEP_INTERVAL_MS = 10;

export class CallerShare {
  readonly #limits: Record<CallerKind, number>;
  readonly #maxQueued: number;
  readonly #callers = new Map<string, CallerState>();
  readonly #now: () => number;

  constructor(
    limits: Record<CallerKind, number>,
    maxQueued: number,
    now: () => number = () => performance.now(),
  ) {
    this.#limits = limits;
    this.#maxQueued = maxQueued;
    this.#now = now;
  }

  /** Callers with calls in flight or waiting (for tests and metrics). */
  get callers(): number {
    return this.#callers.size;
  }

  /**
   * Runs `work` within the share of `caller` (of class `kind`) of the `upstream`'s concurrency.
   * `gone` is asked only of a call that has to wait: when it says no request waits any more, the
   * call rejects with {@link CALL_DROPPED}, `work` never run.
   */
  run<T>(
    caller: string,
    kind: CallerKind,
    upstream: UpstreamName,
    work: () => Promise<T>,
    gone?: () => boolean,
  ): Promise<T> {
    let state = this.#callers.get(caller);
    if (!state) state = this.#enter(caller);
    if (state.active < this.#limits[kind]) {
      state.active += 1;
      return this.#holding(state, work);
    }
    if (gone?.()) return Promise.reject(CALL_DROPPED);
    if (state.waiting.size >= this.#maxQueued && this.#dropGone(state) === 0) {
      return Promise.reject(
        new UpstreamUnavailableError(upstream, 'too many calls in flight for this caller'),
      );
    }
    // The slot is handed over by the call that ends (active is not decremented then).
    const { waiting } = state;
    return new Promise<T>((resolve, reject) => {
      waiting.add({ work, resolve: resolve as (value: unknown) => void, reject, gone });
    });
  }

  /** A caller's entry, made when it has its first call in flight. */
  #enter(caller: string): CallerState {
    const state: CallerState = {
      active: 0,
      waiting: new Set(),
      sweptAt: Number.NEGATIVE_INFINITY,
      release: () => {
        // The next call still wanted takes the slot; those nobody waits for are dropped on the way.
        for (const next of state.waiting) {
          state.waiting.delete(next);
          if (next.gone?.()) {
            next.reject(CALL_DROPPED);
            continue;
          }
          this.#holding(state, next.work).then(next.resolve, next.reject);
          return;
        }
        state.active -= 1;
        if (state.active === 0) this.#callers.delete(caller);
      },
    };
    this.#callers.set(caller, state);
    return state;
  }

  /**
   * Drops the waiting calls no request waits for any more; how many it dropped. At most once
   * per {@link SWEEP_INTERVAL_MS} per caller (none dropped otherwise).
   */
  #dropGone(state: CallerState): number {
    const now = this.#now();
    if (now - state.sweptAt < SWEEP_INTERVAL_MS) return 0;
    state.sweptAt = now;
    let dropped = 0;
    for (const call of state.waiting) {
      if (call.gone?.()) {
        state.waiting.delete(call);
        call.reject(CALL_DROPPED);
        dropped += 1;
      }
    }
    return dropped;
  }

  /** Runs `work` in a slot already taken, and passes the slot on (or frees it) when it settles. */
  #holding<T>(state: CallerState, work: () => Promise<T>): Promise<T> {
    let running: Promise<T>;
    try {
      running = work();
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(state.release, state.release);
    return running;
  }
}
