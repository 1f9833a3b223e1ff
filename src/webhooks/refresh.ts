/**
 * Fetching a record again because notifications named it: at most one fetch per record in flight
 * at a time, and none lost. A notification that arrives while a fetch of its record is under
 * way cannot be answered by that fetch (it may have started before the change the notification
 * announces), so it asks for one more fetch after it; however many arrive meanwhile, that is
 * one. 1,000 notifications for one record in a second are thus a handful of fetches, one at a
 * time.
 *
 * With Redis the rule holds for the cluster: `SET <prefix>:webhook:dirty:<key>` says "fetch
 * again", `SET <prefix>:webhook:lock:<key> NX` elects the replica that fetches, and the holder
 * lets go of the lock only when no one asked again meanwhile (one Lua script, so a request
 * cannot slip between the look and the release). A replica that asked and did not get the lock
 * watches until the holder has taken its request (the holder deletes "dirty" as each fetch
 * begins) or has gone without it (the lock expired, or was let go while Redis hiccuped), and
 * then takes the lock itself: a request is never lost. When Redis fails, each replica fetches
 * for its own notifications (still one at a time per record in the process).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisConnection } from '../state/redis.ts';
import { RELEASE_UNLESS_ASKED } from '../state/scripts.ts';

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

/**
 * The refresher; `holdMs` bounds how long a replica that died while fetching keeps the record's
 * lock (longer than one upstream read).
 */
export function createRefresher(holdMs: number, redis?: RedisConnection): Refresher {
  const running = new Map<string, Pending>();

  /** One round for the cluster: fetch while anyone asks, or leave it to the replica that does. */
  const clusterRound = async (key: string, since: number, work: RefreshWork): Promise<void> => {
    if (!redis) return work(since);
    const lock = redis.key('webhook', 'lock', key);
    const dirty = redis.key('webhook', 'dirty', key);
    const token = randomUUID();
    for (;;) {
      let won: boolean;
      try {
        won = await redis.run(async (client) => {
          await client.set(dirty, '1', { expiration: { type: 'PX', value: holdMs } });
          const reply = await client.set(lock, token, {
            condition: 'NX',
            expiration: { type: 'PX', value: holdMs },
          });
          return reply === 'OK';
        });
      } catch {
        redis.failed('webhook');
        return work(since);
      }
      if (won) return holding(lock, dirty, token, since, work);
      // Another replica fetches now: wait until it has taken this request, or gone without it.
      const taken = await handedOver(lock, dirty);
      if (taken === 'taken') return;
      if (taken === 'error') return work(since);
    }
  };

  /** Fetches while anyone asks, then lets go of the lock. */
  const holding = async (
    lock: string,
    dirty: string,
    token: string,
    since: number,
    work: RefreshWork,
  ): Promise<void> => {
    if (!redis) return;
    for (;;) {
      try {
        await redis.run((client) => client.del(dirty));
      } catch {
        redis.failed('webhook');
      }
      await work(since);
      let released: unknown = 1;
      try {
        released = await redis.script(RELEASE_UNLESS_ASKED, [lock, dirty], [token, String(holdMs)]);
      } catch {
        // Those who asked meanwhile take the lock when it expires.
        redis.failed('webhook');
      }
      if (Number(released) === 1) return;
    }
  };

  /** Waits until the holder took the request ("dirty" gone) or the lock is free. */
  const handedOver = async (lock: string, dirty: string): Promise<'taken' | 'free' | 'error'> => {
    if (!redis) return 'error';
    const deadline = Date.now() + 2 * holdMs;
    while (Date.now() < deadline) {
      await sleep(WATCH_MS);
      try {
        const [asked, held] = await redis.run((client) =>
          Promise.all([client.exists(dirty), client.exists(lock)]),
        );
        if (asked === 0) return 'taken';
        if (held === 0) return 'free';
      } catch {
        redis.failed('webhook');
        return 'error';
      }
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
