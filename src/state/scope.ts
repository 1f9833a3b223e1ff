/**
 * One business's view of the shared state: every key, lease, set, bucket and channel name it
 * makes is under the business's namespace, so a feature built on the view cannot reach another
 * business's records, locks, live topics, slots, claims or quotas, whatever keys it chooses.
 * Persisted documents stay shared (a document holds no data).
 *
 * In memory, the views of one state share its record store (one bound for every business, as
 * one Redis is); in Redis, a namespaced key also binds each sealed value to its business: a value
 * copied under another business's key does not open.
 */
import type { Sealer } from '../cache/seal.ts';
import type { SharedState } from './index.ts';
import type { Leases } from './lease.ts';
import type { MemoryStoreBounds, Versioned, VersionedStore } from './records.ts';

/** The record stores each state's views share, by their bounds. */
const sharedStores = new WeakMap<SharedState, WeakMap<MemoryStoreBounds, unknown>>();

function storeOf<E extends Versioned>(
  root: SharedState,
  bounds: MemoryStoreBounds,
  sealer: Sealer | undefined,
): VersionedStore<E> {
  let stores = sharedStores.get(root);
  if (!stores) {
    stores = new WeakMap();
    sharedStores.set(root, stores);
  }
  let store = stores.get(bounds) as VersionedStore<E> | undefined;
  if (!store) {
    store = root.records<E>(bounds, sealer);
    stores.set(bounds, store);
  }
  return store;
}

/** `root` as the business of namespace `namespace` sees it. */
export function within(root: SharedState, namespace: string): SharedState {
  const name = (part: string): string => `${namespace}:${part}`;
  const leases: Leases = {
    take: (lease, holdMs) => root.leases.take(name(lease), holdMs),
    ask: (lease, holdMs) => root.leases.ask(name(lease), holdMs),
    look: (lease) => root.leases.look(name(lease)),
  };
  return {
    shared: root.shared,
    leases,
    records: <E extends Versioned>(bounds: MemoryStoreBounds, sealer?: Sealer) => {
      const store = storeOf<E>(root, bounds, sealer);
      return {
        get: (key) => store.get(name(key)),
        writeIfNewer: (key, entry, ttlMs) => store.writeIfNewer(name(key), entry, ttlMs),
        ping: () => store.ping(),
      } satisfies VersionedStore<E>;
    },
    once: { first: (key, ttlMs) => root.once.first(name(key), ttlMs) },
    lapsing: {
      add: (set, member, ttlMs, most) => root.lapsing.add(name(set), member, ttlMs, most),
      renew: (set, member, ttlMs) => root.lapsing.renew(name(set), member, ttlMs),
      remove: (set, member) => root.lapsing.remove(name(set), member),
      count: (set) => root.lapsing.count(name(set)),
    },
    // Channel names are full names, made by `key` below: already the business's.
    channels: root.channels,
    documents: root.documents,
    buckets: (rate) => {
      const buckets = root.buckets(rate);
      return { take: (key) => buckets.take(name(key)) };
    },
    windows: (windowMs, most) => {
      const windows = root.windows(windowMs, most);
      return { take: (key) => windows.take(name(key)) };
    },
    orLocally: (component, shared, local) => root.orLocally(component, shared, local),
    key: (...parts) => root.key(namespace, ...parts),
  };
}
