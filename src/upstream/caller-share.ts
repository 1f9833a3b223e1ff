/**
 * A fair share of upstream concurrency per caller: one caller has at most its class's limit of
 * upstream calls in flight in this process (an end user's token, or a service's, which sends a
 * merchant backend's many requests at once); its further calls wait in its own queue (at most
 * `maxQueued`, beyond which they are refused at once) before they may take a slot of the
 * upstream's cap.
 * Both are the same queue ({@link Slots}): strict arrival order, a slot handed from a call that
 * ends to the next one waiting.
 * So one caller's request of a hundred references cannot fill the slots and queue that every
 * other caller's calls need. A caller's entry is dropped as soon as it is idle.
 *
 * A waiting call whose requests have all ended (their clients gone) is never made (see
 * {@link Slots}); a call already in flight runs to its end (its answer still fills the cache).
 * The wait counts toward the read's time budget, which the record sources start before it (see
 * UpstreamHttp.get's `since`).
 */
import { type UpstreamName, UpstreamUnavailableError } from '../errors.ts';
import { Slots } from './slots.ts';

export { CALL_DROPPED, SWEEP_INTERVAL_MS } from './slots.ts';

/** The classes of callers, as for rate limits: tokens without scopes, and with. */
export type CallerKind = 'endUser' | 'service';

export class CallerShare {
  readonly #limits: Record<CallerKind, number>;
  readonly #maxQueued: number;
  /** The callers with calls running or waiting, each with its slots; dropped once idle. */
  readonly #callers = new Map<string, Slots>();
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
    let slots = this.#callers.get(caller);
    if (!slots) slots = this.#enter(caller);
    return (
      slots.run(work, gone, this.#limits[kind]) ??
      Promise.reject(
        new UpstreamUnavailableError(upstream, 'too many calls in flight for this caller'),
      )
    );
  }

  /**
   * A caller's slots, made when it has its first call in flight. Each call brings its class's
   * limit (a caller's tokens may differ in scopes), so the slots' own limit is never the one that
   * applies.
   */
  #enter(caller: string): Slots {
    const slots: Slots = new Slots(this.#limits.service, this.#maxQueued, {
      now: this.#now,
      onIdle: () => {
        if (this.#callers.get(caller) === slots) this.#callers.delete(caller);
      },
    });
    this.#callers.set(caller, slots);
    return slots;
  }
}
