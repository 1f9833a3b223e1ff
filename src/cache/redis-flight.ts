/**
 * Single flight across replicas: a short Redis lock per cache key.
 *
 * `SET <prefix>:flight:<cache key> <random token> NX PX <hold>` elects the process that calls the
 * upstream; the others poll the cache every `pollMs` for the value it stores, and take the lock
 * themselves when it is released without a value (an unknown record, an upstream error) or
 * expires (the winner died). After `waitMs` (the upstream time budget) a waiter calls the
 * upstream itself, so a lost lock costs one extra call, never a hang. When Redis fails, each
 * process just does its own call (the in-process single flight in front still collapses its
 * own requests).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisConnection } from '../state/redis.ts';
import { RELEASE_LEASE } from '../state/scripts.ts';
import type { FlightLock } from './sources.ts';

export interface RedisFlightOptions {
  /** Expiry of a lock (ms): longer than one upstream read, so a live winner keeps it. */
  holdMs: number;
  /** Longest wait for another replica's value before calling the upstream anyway (ms). */
  waitMs: number;
  /** Interval between two looks at the cache while waiting (ms). */
  pollMs: number;
}

/** The Redis implementation of {@link FlightLock}. */
export class RedisFlightLock implements FlightLock {
  readonly #redis: RedisConnection;
  readonly #options: RedisFlightOptions;

  constructor(redis: RedisConnection, options: RedisFlightOptions) {
    this.#redis = redis;
    this.#options = options;
  }

  async run<T>(key: string, work: () => Promise<T>, stored: () => Promise<T | undefined>) {
    const lock = this.#redis.key('flight', key);
    const token = randomUUID();
    const deadline = Date.now() + this.#options.waitMs;
    for (;;) {
      const won = await this.#acquire(lock, token);
      if (won === 'error') return work();
      if (won) return this.#holding(lock, token, work);
      await sleep(this.#options.pollMs);
      const value = await stored();
      if (value !== undefined) return value;
      if (Date.now() >= deadline) return work();
    }
  }

  async #acquire(lock: string, token: string): Promise<boolean | 'error'> {
    try {
      const reply = await this.#redis.run((client) =>
        client.set(lock, token, {
          condition: 'NX',
          expiration: { type: 'PX', value: this.#options.holdMs },
        }),
      );
      return reply === 'OK';
    } catch {
      this.#redis.failed('flight');
      return 'error';
    }
  }

  async #holding<T>(lock: string, token: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      // Not awaited: the answer need not wait for the release; waiters see the value first.
      this.#redis.script(RELEASE_LEASE, [lock], [token]).catch(() => this.#redis.failed('flight'));
    }
  }
}
