/**
 * Notifications already accepted, remembered for twice the tolerance window (a signed time may
 * lie up to the tolerance in the future, and is accepted until the tolerance has passed after
 * it): a notification received again in that time (a sender's retry, a replay by someone who
 * recorded it) is answered 200 and fetches nothing. Shared by every replica through Redis
 * (`SET … NX EX`); in memory otherwise, or while Redis does not answer.
 */
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { RedisConnection } from '../state/redis.ts';

/** Most notifications one process remembers on its own (the oldest forgotten first). */
const MAX_REMEMBERED = 100_000;

export interface ReplayGuard {
  /** True the first time a notification is seen within the window; false for a replay. */
  first(source: string, t: number, body: Buffer): Promise<boolean>;
}

/**
 * The guard. A notification is named by what its signature covers (source, `t` and the raw
 * body), not by the header's text: adding a stray `v1=` to a recorded header does not make it new.
 */
export function createReplayGuard(windowSeconds: number, redis?: RedisConnection): ReplayGuard {
  const seen = new LRUCache<string, true>({ max: MAX_REMEMBERED, ttl: windowSeconds * 1000 });
  const local = (key: string): boolean => {
    if (seen.has(key)) return false;
    seen.set(key, true);
    return true;
  };
  return {
    first: async (source, t, body) => {
      const key = hash(
        'sha256',
        Buffer.concat([Buffer.from(`${source}\u0000${t}\u0000`), body]),
        'base64url',
      );
      if (!redis) return local(key);
      try {
        const reply = await redis.run((client) =>
          client.set(redis.key('webhook', 'seen', key), '1', {
            condition: 'NX',
            expiration: { type: 'EX', value: windowSeconds },
          }),
        );
        // Also remembered here, so that a Redis outage right after does not forget it.
        seen.set(key, true);
        return reply === 'OK';
      } catch {
        redis.failed('webhook');
        return local(key);
      }
    },
  };
}
