/**
 * Notifications already accepted, remembered for twice the tolerance window (a signed time may
 * lie up to the tolerance in the future, and is accepted until the tolerance has passed after
 * it): a notification received again in that time (a sender's retry, a replay by someone who
 * recorded it) is answered 200 and fetches nothing. Shared by every replica through the state's
 * set-once store (state/once.ts); remembered in this process as well, so that while Redis does
 * not answer (or right after an outage began) a replay is still known here.
 */
import { hash } from 'node:crypto';
import type { SharedState } from '../state/index.ts';
import { MemorySetOnce } from '../state/once.ts';

export interface ReplayGuard {
  /** True the first time a notification is seen within the window; false for a replay. */
  first(source: string, t: number, body: Buffer): Promise<boolean>;
}

/**
 * The guard. A notification is named by what its signature covers (source, `t` and the raw
 * body), not by the header's text: adding a stray `v1=` to a recorded header does not make it new.
 */
export function createReplayGuard(windowSeconds: number, state: SharedState): ReplayGuard {
  const windowMs = windowSeconds * 1000;
  const local = new MemorySetOnce();
  return {
    first: async (source, t, body) => {
      const key = hash(
        'sha256',
        Buffer.concat([Buffer.from(`${source}\u0000${t}\u0000`), body]),
        'base64url',
      );
      if (!state.shared) return local.claim(key, windowMs);
      return state.orLocally(
        'webhook',
        async () => {
          const first = await state.once.first(`webhook:seen:${key}`, windowMs);
          local.claim(key, windowMs);
          return first;
        },
        () => local.claim(key, windowMs),
      );
    },
  };
}
