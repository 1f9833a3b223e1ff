/**
 * Single flight across replicas: a short lease per cache key (state/lease.ts).
 *
 * The process that takes the lease `flight:<cache key>` calls the upstream; the others look at
 * the cache every `pollMs` for the value it stores, and take the lease themselves when it is
 * given back without a value (an unknown record, an upstream error) or lapses (the holder died).
 * After `waitMs` (the upstream time budget) a waiter calls the upstream itself, so a lost lease
 * costs one extra call, never a hang. When Redis fails, each process just does its own call
 * (the in-process single flight in front still collapses its own requests). A waiter whose
 * requests have all ended stops waiting, and neither calls the upstream nor stores anything.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SharedState } from '../state/index.ts';
import type { Lease } from '../state/lease.ts';
import type { FlightLock } from './sources.ts';

export interface FlightOptions {
  /** Hold of a lease (ms): longer than one upstream read, so a live holder keeps it. */
  holdMs: number;
  /** Longest wait for another replica's value before calling the upstream anyway (ms). */
  waitMs: number;
  /** Interval between two looks at the cache while waiting (ms). */
  pollMs: number;
  /** The clock and the wait between looks (tests pass their own). */
  now?: () => number;
  pause?: (ms: number) => Promise<unknown>;
}

/** {@link FlightLock} over the state's leases. */
export class LeaseFlightLock implements FlightLock {
  readonly #state: SharedState;
  readonly #options: FlightOptions;
  readonly #now: () => number;
  readonly #pause: (ms: number) => Promise<unknown>;

  constructor(state: SharedState, options: FlightOptions) {
    this.#state = state;
    this.#options = options;
    this.#now = options.now ?? (() => Date.now());
    this.#pause = options.pause ?? sleep;
  }

  async run<T>(
    key: string,
    work: () => Promise<T>,
    stored: () => Promise<T | undefined>,
    abandoned?: () => AbortSignal,
  ) {
    const name = `flight:${key}`;
    const deadline = this.#now() + this.#options.waitMs;
    // Asked once this process has to wait: a read that wins the lease at once asks nothing.
    let signal: AbortSignal | undefined;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const lease = await this.#state.orLocally<Lease | undefined | 'failed'>(
        'flight',
        () => this.#state.leases.take(name, this.#options.holdMs),
        () => 'failed',
      );
      if (lease === 'failed') return work();
      if (lease) return this.#holding(lease, work);
      signal ??= abandoned?.();
      await this.#pause(this.#options.pollMs);
      if (signal?.aborted) throw signal.reason;
      const value = await stored();
      if (value !== undefined) return value;
      if (this.#now() >= deadline) {
        if (signal?.aborted) throw signal.reason;
        return work();
      }
    }
  }

  async #holding<T>(lease: Lease, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      // Not awaited: the answer need not wait for the release; waiters see the value first.
      void this.#state.orLocally(
        'flight',
        () => lease.release(),
        () => undefined,
      );
    }
  }
}
