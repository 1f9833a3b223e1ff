/**
 * Fetching a record again because notifications named it: at most one fetch per record in flight
 * at a time, and none lost. A notification that arrives while a fetch of its record is under
 * way cannot be answered by that fetch (it may have started before the change the notification
 * announces), so it asks for one more fetch after it; however many arrive meanwhile, that is
 * one. 1,000 notifications for one record in a second are thus a handful of fetches, one at a
 * time.
 *
 * With Redis the rule holds for the cluster, through a lease per record (state/lease.ts,
 * `webhook:<key>`): asking sets the lease's flag ("fetch again") and tries to take the lease;
 * the holder clears the flag as each fetch begins and gives the lease back only when no one
 * asked again meanwhile (one atomic step, so a request cannot slip between the look and the
 * release). A replica that asked and did not get the lease watches until the holder has taken
 * its request (the flag is gone) or has gone without it (the lease lapsed, or was given back
 * while Redis hiccuped), and then takes the lease itself: a request is never lost. When Redis
 * fails, each replica fetches for its own notifications (still one at a time per record in the
 * process). In memory the same protocol runs for the process alone.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SharedState } from '../state/index.ts';
import type { Lease } from '../state/lease.ts';

/** How often a replica that asked looks whether the holder took its request (ms). */
const WATCH_MS = 25;

/** The work of one fetch; `since`: when the oldest notification it answers arrived (epoch ms). */
export type RefreshWork = (since: number) => Promise<void>;

export interface Refresher {
  /** Asks for a fetch of `key` on behalf of a notification that arrived at `at` (epoch ms). */
  request(key: string, at: number, work: RefreshWork): Promise<void>;
}

interface Pending {
  /** The earliest notification not yet answered by a fetch that started after it. */
  since: number | undefined;
}

/** How the refresher waits and tells time (tests pass their own). */
export interface RefresherClock {
  now: () => number;
  pause: (ms: number) => Promise<unknown>;
}

/**
 * The refresher; `holdMs` bounds how long a replica that died while fetching keeps the record's
 * lease (longer than one upstream read).
 */
export function createRefresher(
  holdMs: number,
  state: SharedState,
  clock: RefresherClock = { now: () => Date.now(), pause: sleep },
): Refresher {
  const running = new Map<string, Pending>();
  const { leases } = state;

  /** One round for the cluster: fetch while anyone asks, or leave it to the replica that does. */
  const clusterRound = async (key: string, since: number, work: RefreshWork): Promise<void> => {
    const name = `webhook:${key}`;
    for (;;) {
      const lease = await state.orLocally<Lease | undefined | 'failed'>(
        'webhook',
        async () => {
          // The request outlives a lease taken before it: a holder that dies before taking it
          // leaves it standing when its lease lapses, so the watcher sees the lease free.
          await leases.ask(name, 2 * holdMs);
          return leases.take(name, holdMs);
        },
        () => 'failed',
      );
      if (lease === 'failed') return work(since);
      if (lease) return holding(lease, since, work);
      // Another replica fetches now: wait until it has taken this request, or gone without it.
      const taken = await handedOver(name);
      if (taken === 'taken') return;
      if (taken === 'error') return work(since);
    }
  };

  /** Fetches while anyone asks, then gives the lease back. */
  const holding = async (lease: Lease, since: number, work: RefreshWork): Promise<void> => {
    for (;;) {
      await state.orLocally(
        'webhook',
        () => lease.beginRound(),
        () => undefined,
      );
      await work(since);
      // On a failure, those who asked meanwhile take the lease when it lapses.
      const released = await state.orLocally(
        'webhook',
        () => lease.releaseUnlessAsked(holdMs),
        () => true,
      );
      if (released) return;
    }
  };

  /** Waits until the holder took the request (the flag is gone) or the lease is free. */
  const handedOver = async (name: string): Promise<'taken' | 'free' | 'error'> => {
    const deadline = clock.now() + 2 * holdMs;
    while (clock.now() < deadline) {
      await clock.pause(WATCH_MS);
      const seen = await state.orLocally<{ held: boolean; asked: boolean } | undefined>(
        'webhook',
        () => leases.look(name),
        () => undefined,
      );
      if (!seen) return 'error';
      if (!seen.asked) return 'taken';
      if (!seen.held) return 'free';
    }
    return 'error';
  };

  return {
    request: async (key, at, work) => {
      const pending = running.get(key);
      if (pending) {
        pending.since = Math.min(pending.since ?? at, at);
        return;
      }
      const state: Pending = { since: at };
      running.set(key, state);
      try {
        while (state.since !== undefined) {
          const since = state.since;
          state.since = undefined;
          await clusterRound(key, since, work).catch(() => undefined);
        }
      } finally {
        running.delete(key);
      }
    },
  };
}
