/**
 * The time budgets of an upstream's calls on one timer. Each call in flight is kept in a list in
 * the order of its deadline (`performance.now()` when its budget ends); one timer is set for the
 * earliest, and when it fires every call whose deadline has passed is told, and the timer is set
 * for the next.
 *
 * Why not one timer per call: Node keeps one list of timers per duration, and a call's duration
 * is what is left of its read's budget, which differs by the time the read waited in a queue.
 * Calls that waited made and dropped a timer list each few calls, about 2 % of the CPU of a
 * request of twenty records in the benchmark. Here a call costs two links set and two cleared.
 *
 * A call that settles leaves the list and the timer as it is: the timer, set for a call that has
 * since left, fires at that call's deadline, finds the first call left not yet due and is set
 * again for it. Under a steady load it fires about once per budget.
 */

/** An entry of the list: a call in flight, with its deadline and its place in the list. */
export abstract class Timed {
  /** When the call's budget ends (`performance.now()` time). */
  deadline = 0;
  /** The entries before and after it, while it is listed. */
  earlier: Timed | undefined;
  later: Timed | undefined;
  listed = false;

  /** The call's budget has ended (it has left the list). */
  abstract timedOut(): void;
}

export interface DeadlinesOptions {
  /** The clock (ms; default `performance.now`). */
  now?: () => number;
  /** Sets the timer (default an unref'd `setTimeout`: the calls' sockets keep the process up). */
  setTimer?: (fire: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
}

function unrefTimer(fire: () => void, ms: number): NodeJS.Timeout {
  return setTimeout(fire, ms).unref();
}

export class Deadlines {
  readonly #now: () => number;
  readonly #setTimer: (fire: () => void, ms: number) => unknown;
  readonly #clearTimer: (timer: unknown) => void;
  #first: Timed | undefined;
  #last: Timed | undefined;
  #timer: unknown;
  /** The deadline the timer is set for (Infinity: none). */
  #armedFor = Number.POSITIVE_INFINITY;

  constructor(options: DeadlinesOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#setTimer = options.setTimer ?? unrefTimer;
    this.#clearTimer =
      options.clearTimer ?? ((timer) => clearTimeout(timer as NodeJS.Timeout | undefined));
  }

  /** Lists `entry`, whose budget ends `ms` from now; it is told when that time has come. */
  add(entry: Timed, ms: number): void {
    const deadline = this.#now() + ms;
    entry.deadline = deadline;
    entry.listed = true;
    // Most calls come in the order of their deadlines: the place is found from the end.
    let before = this.#last;
    while (before && before.deadline > deadline) before = before.earlier;
    entry.earlier = before;
    entry.later = before ? before.later : this.#first;
    if (entry.later) entry.later.earlier = entry;
    else this.#last = entry;
    if (before) before.later = entry;
    else this.#first = entry;
    if (deadline < this.#armedFor) this.#arm(deadline);
  }

  /** Unlists `entry` (its call has settled); nothing when it is not listed. */
  remove(entry: Timed): void {
    if (!entry.listed) return;
    entry.listed = false;
    const { earlier, later } = entry;
    if (earlier) earlier.later = later;
    else this.#first = later;
    if (later) later.earlier = earlier;
    else this.#last = earlier;
    entry.earlier = undefined;
    entry.later = undefined;
  }

  /** Entries listed (for tests). */
  get size(): number {
    let count = 0;
    for (let entry = this.#first; entry; entry = entry.later) count += 1;
    return count;
  }

  #arm(deadline: number): void {
    if (this.#timer !== undefined) this.#clearTimer(this.#timer);
    this.#armedFor = deadline;
    // At least a millisecond, rounded up: never before the deadline by the timer's rounding.
    this.#timer = this.#setTimer(this.#fire, Math.max(1, Math.ceil(deadline - this.#now())));
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#armedFor = Number.POSITIVE_INFINITY;
    const now = this.#now();
    const due: Timed[] = [];
    for (let entry = this.#first; entry && entry.deadline <= now; entry = this.#first) {
      this.remove(entry);
      due.push(entry);
    }
    // Set again for the first call not yet due, before any is told.
    if (this.#first) this.#arm(this.#first.deadline);
    for (const entry of due) entry.timedOut();
  };
}
