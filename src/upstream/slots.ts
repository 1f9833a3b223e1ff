/**
 * Slots for upstream calls: at most `limit` calls at a time, the others waiting in a bounded
 * queue in strict arrival order. The one queue of every upstream call, behind both the
 * upstream's cap (one set of slots per upstream client) and each caller's share of it (one set
 * per caller, see caller-share.ts).
 *
 * The slot of a call that settles is handed to the next waiting call in the same step, so no
 * call arriving meanwhile can take it first. A waiting call whose requests have all ended (their
 * clients gone) is never made: it is dropped when its turn comes, or as soon as its place in a
 * full queue is wanted by another call, so it neither reaches the upstream nor holds a place
 * that a live request needs. Whether it is still wanted is asked at those moments only: a call
 * waits at no cost. A call already running runs to its end.
 *
 * A call that waited runs as the work of its own caller (its asynchronous context: the request's
 * id sent upstream and logged, the trace its span belongs to), not as that of the call that
 * ended and handed it the slot.
 */

/** What a call that was dropped while waiting rejects with (no request sees it). */
export const CALL_DROPPED = new DOMException(
  'No request waits for this call any more.',
  'AbortError',
);

/**
 * How often a full queue is looked through, at most (ms): a caller that keeps its queue full of
 * live calls and sends more is refused without a look through the whole queue each time.
 */
export const SWEEP_INTERVAL_MS = 10;

/** A call waiting for a slot: how it is told its turn has come, or dropped, and whether it is still wanted. */
interface Queued {
  /** Its turn: the slot is its own from now on. */
  turn: () => void;
  reject: (reason: unknown) => void;
  /** Whether no request waits for it any more. */
  gone: (() => boolean) | undefined;
  /** The call after it in the queue. */
  next: Queued | undefined;
}

export interface SlotsOptions {
  /** The clock of the sweeps' interval (ms; tests pass their own). */
  now?: () => number;
  /** Told when the last call has left (none running, none waiting). */
  onIdle?: () => void;
}

export class Slots {
  readonly #limit: number;
  readonly #maxQueued: number;
  readonly #now: () => number;
  readonly #onIdle: (() => void) | undefined;
  #active = 0;
  /**
   * The calls waiting, in arrival order: a list linked through `next`, from the first to the
   * last, of `#queued` calls; one dropped is unlinked from anywhere in it. (A `Set` taken from
   * its front kept its deleted entries until it was rebuilt, and each release walked past them:
   * about 1.4 % of a request's CPU when twenty calls per request waited.)
   */
  #first: Queued | undefined;
  #last: Queued | undefined;
  #queued = 0;
  /** When the full queue was last looked through for calls nobody waits for (ms). */
  #sweptAt = Number.NEGATIVE_INFINITY;

  /** `limit`: the calls at a time unless a call says otherwise; `maxQueued`: the queue's bound. */
  constructor(limit: number, maxQueued: number, options: SlotsOptions = {}) {
    this.#limit = limit;
    this.#maxQueued = maxQueued;
    this.#now = options.now ?? (() => performance.now());
    this.#onIdle = options.onIdle;
  }

  /** Whether a call made now would run at once. */
  get free(): boolean {
    return this.#active < this.#limit && this.#queued === 0;
  }

  /** Calls running. */
  get active(): number {
    return this.#active;
  }

  /** Calls waiting. */
  get queued(): number {
    return this.#queued;
  }

  /**
   * Runs `work` in a slot: at once when one is free (and no call waits before it), else once
   * its turn comes. `gone` is asked only of a call that has to wait: when it says no request
   * waits any more, the call rejects with {@link CALL_DROPPED}, `work` never run. Undefined when
   * the queue is full (the caller says why it refuses). `limit` (default the slots' own) bounds
   * the calls at a time for this call.
   */
  run<T>(
    work: () => Promise<T>,
    gone?: () => boolean,
    limit = this.#limit,
  ): Promise<T> | undefined {
    if (this.take(limit)) return this.#holding(work);
    if (gone?.()) return Promise.reject(CALL_DROPPED);
    if (this.#queued >= this.#maxQueued && this.#dropGone() === 0) return undefined;
    // The slot is handed over by the call that ends (`active` is not decremented then). The work
    // runs in a reaction registered here, so as the work of this call's caller (its request's id
    // and trace go with it), never as that of the call that handed the slot over.
    return new Promise<void>((turn, reject) => {
      this.#enqueue({ turn, reject, gone, next: undefined });
    }).then(() => this.#holding(work));
  }

  /**
   * Takes a slot at once when one is free and no call waits before it (`limit`: as for
   * {@link run}). True: the slot is the caller's, who gives it back through {@link release}
   * once its work has settled, exactly once (in a step it takes anyway, rather than in a
   * reaction of its own as {@link run} adds). False: nothing taken, the call has to wait.
   */
  take(limit = this.#limit): boolean {
    if (this.#active >= limit || this.#queued !== 0) return false;
    this.#active += 1;
    return true;
  }

  /**
   * Passes the slot of a call that settled on to the next call still wanted, or frees it. One
   * function for all the calls.
   */
  readonly release = (): void => {
    // The next call still wanted takes the slot; those nobody waits for are dropped on the way.
    for (let next = this.#first; next; next = this.#first) {
      this.#unlink(next, undefined);
      if (next.gone?.()) {
        next.reject(CALL_DROPPED);
        continue;
      }
      next.turn();
      return;
    }
    this.#active -= 1;
    if (this.#active === 0) this.#onIdle?.();
  };

  /**
   * Drops the waiting calls no request waits for any more; how many it dropped. At most once
   * per {@link SWEEP_INTERVAL_MS} (none dropped otherwise).
   */
  #dropGone(): number {
    const now = this.#now();
    if (now - this.#sweptAt < SWEEP_INTERVAL_MS) return 0;
    this.#sweptAt = now;
    let dropped = 0;
    let before: Queued | undefined;
    for (let call = this.#first; call; ) {
      const after = call.next;
      if (call.gone?.()) {
        this.#unlink(call, before);
        call.reject(CALL_DROPPED);
        dropped += 1;
      } else before = call;
      call = after;
    }
    return dropped;
  }

  #enqueue(call: Queued): void {
    if (this.#last) this.#last.next = call;
    else this.#first = call;
    this.#last = call;
    this.#queued += 1;
  }

  /** Takes `call` out of the queue; `before` is the call before it (undefined: it is the first). */
  #unlink(call: Queued, before: Queued | undefined): void {
    if (before) before.next = call.next;
    else this.#first = call.next;
    if (this.#last === call) this.#last = before;
    call.next = undefined;
    this.#queued -= 1;
  }

  /** Runs `work` in a slot already taken, and passes the slot on (or frees it) when it settles. */
  #holding<T>(work: () => Promise<T>): Promise<T> {
    let running: Promise<T>;
    try {
      running = work();
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(this.release, this.release);
    return running;
  }
}
