/**
 * The state port: what replicas share, chosen once (app.ts) — this process's memory (a cluster
 * of one), or Redis (`CACHE_URL`) for every replica.
 *
 * The one rule when Redis fails: the feature acts locally and the failure is counted
 * ({@link SharedState.orLocally}: `gateway_redis_errors_total{component}` and one throttled log
 * line, through the connection's observer). Memory never fails.
 */

import type { Sealer } from '../cache/seal.ts';
import { type Channels, MemoryChannels, RedisChannels } from './channel.ts';
import { memoryDocuments, RedisDocuments, type SharedDocuments } from './documents.ts';
import { type LapsingSets, MemoryLapsingSets, RedisLapsingSets } from './lapsing.ts';
import { type Leases, MemoryLeases, RedisLeases } from './lease.ts';
import { MemorySetOnce, RedisSetOnce, type SetOnce } from './once.ts';
import {
  ALLOWED,
  type BucketRate,
  MemoryTokenBuckets,
  MemoryWindowCounters,
  RedisTokenBuckets,
  RedisWindowCounters,
  type TokenBuckets,
  type WindowCounters,
} from './quota.ts';
import {
  type MemoryStoreBounds,
  MemoryVersionedStore,
  RedisVersionedStore,
  type Versioned,
  type VersionedStore,
} from './records.ts';
import type { RedisConnection } from './redis.ts';

export { hashedKeyPart } from './redis.ts';

export interface SharedState {
  /** True when the state is shared with other replicas (Redis). */
  readonly shared: boolean;
  readonly leases: Leases;
  /**
   * A versioned store: in memory bounded by `bounds`; in Redis, sealed with `sealer` when given
   * (`bounds` then bound nothing: Redis's memory does).
   */
  records<E extends Versioned>(bounds: MemoryStoreBounds, sealer?: Sealer): VersionedStore<E>;
  readonly once: SetOnce;
  readonly lapsing: LapsingSets;
  readonly channels: Channels;
  /** Persisted documents, bounded for the cluster (none kept in memory: see state/documents.ts). */
  readonly documents: SharedDocuments;
  /**
   * Token buckets at `rate`. When Redis fails, a take is allowed (an outage of the shared
   * counters must not become an outage of the gateway) and counted as `rate_limit`.
   */
  buckets(rate: BucketRate): TokenBuckets;
  /**
   * Counters of at most `most` per key in fixed windows of `windowMs`. When Redis fails, this
   * process counts on its own (the failure counted as `apq`, their one user).
   */
  windows(windowMs: number, most: number): WindowCounters;
  /**
   * Runs `shared`; when the store fails, counts the failure for `component` and returns what
   * `local` does instead.
   */
  orLocally<T>(
    component: string,
    shared: () => Promise<T>,
    local: () => T | Promise<T>,
  ): Promise<T>;
  /**
   * The full name of a key or channel made of `parts` (under the configured prefix in Redis),
   * for a channel's codec, which binds each message to the name.
   */
  key(...parts: string[]): string;
}

/** State in this process's memory, on the clock `now`. */
export function memoryState(now: () => number = () => Date.now()): SharedState {
  return {
    shared: false,
    leases: new MemoryLeases(now),
    records: <E extends Versioned>(bounds: MemoryStoreBounds): VersionedStore<E> =>
      new MemoryVersionedStore<E>(bounds, now),
    once: new MemorySetOnce(now),
    lapsing: new MemoryLapsingSets(now),
    channels: new MemoryChannels(),
    documents: memoryDocuments,
    buckets: (rate) => new MemoryTokenBuckets(rate, now),
    windows: (windowMs, most) => new MemoryWindowCounters(windowMs, most, now),
    orLocally: (_component, shared) => shared(),
    key: (...parts) => parts.join(':'),
  };
}

/** State in Redis, shared by every replica. */
export function redisState(redis: RedisConnection): SharedState {
  const state: SharedState = {
    shared: true,
    leases: new RedisLeases(redis),
    records: (_bounds, sealer) => new RedisVersionedStore(redis, sealer),
    once: new RedisSetOnce(redis),
    lapsing: new RedisLapsingSets(redis),
    channels: new RedisChannels(redis),
    documents: new RedisDocuments(redis),
    buckets: (rate) => {
      const shared = new RedisTokenBuckets(redis, rate);
      return {
        take: (key) =>
          state.orLocally(
            'rate_limit',
            () => shared.take(key),
            () => ALLOWED,
          ),
      };
    },
    windows: (windowMs, most) => {
      const shared = new RedisWindowCounters(redis, windowMs, most);
      const local = new MemoryWindowCounters(windowMs, most);
      return {
        take: (key) =>
          state.orLocally(
            'apq',
            () => shared.take(key),
            () => local.count(key),
          ),
      };
    },
    orLocally: async (component, shared, local) => {
      try {
        return await shared();
      } catch {
        redis.failed(component);
        return local();
      }
    },
    key: (...parts) => redis.key(...parts),
  };
  return state;
}
