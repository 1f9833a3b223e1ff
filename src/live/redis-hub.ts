/**
 * Live records for a cluster (`CACHE_URL`): ONE poller per record for all replicas. Keys and
 * channels name a record by its topic ({@link LiveKind.topic}: the txRef, or a digest of the
 * userRef); "txRef" below stands for either.
 *
 * - Election: `SET <prefix>:live:{<txRef>}:lock <replica id> NX PX <3 beats>`. The winner polls
 *   (bypassing the cache and writing it) and, every beat (`LIVE_HEARTBEAT_MS`), renews the
 *   lock, publishes a heartbeat and counts the replicas still watching, in one Lua script.
 * - Fan-out: the poller publishes each status change on `<prefix>:live:{<txRef>}:events`; every
 *   replica with subscribers for that txRef listens there and hands the events to its own.
 *   Every message goes through live/messages.ts (sealed with the cache key, or clear and
 *   without personal data: then receivers read the record from the cache).
 * - Who watches: each local watch registers in the sorted set `<prefix>:live:{<txRef>}:subs` (score:
 *   expiry on Redis's clock, refreshed every beat). The poller stops when the set is empty:
 *   the last subscriber of the cluster left, or its replica died (its entries expire).
 * - Takeover: a replica whose subscribers heard nothing for 3 beats tries to take the lock
 *   (free once the silent poller's expired) and polls from then on, continuing the sequence's
 *   backoff (the heartbeats carry its start). Should the lock stay held while nothing is heard,
 *   it reads the record through the cache each beat, so its subscribers still see changes.
 * - Redis down: the locks can't be taken, so each replica with subscribers polls for its own
 *   (as without Redis); when Redis is back, the first to renew the lock keeps polling and the
 *   others stop.
 * - Pushed records (a notification, src/webhooks/): the replica that fetched one hands it to its
 *   own subscribers and publishes it as an event on the channel, like a poller's; the replica
 *   that polls the record takes it as its latest poll and waits longer before the next.
 */
import { randomUUID } from 'node:crypto';
import { publishCommand, SealedChannels } from '../state/channel.ts';
import type { SharedState } from '../state/index.ts';
import type { RedisConnection } from '../state/redis.ts';
import { BEAT, RELEASE_LEASE } from '../state/scripts.ts';
import {
  isLastEvent,
  kindOf,
  type LiveDeps,
  type LiveEvent,
  LiveHubBase,
  type LiveKind,
  type LiveListener,
  type LiveRecord,
  type LiveSource,
  type Poller as PollLoop,
  startPoller,
} from './hub.ts';
import type { LiveMessage, LiveMessages } from './messages.ts';
import { SharedLiveSlots } from './slots.ts';

/** The lapsing set of the cluster's watches of a topic (state/lapsing.ts), which BEAT prunes. */
const watchers = (txRef: string): string => `live:{${txRef}}:subs`;

interface Watch {
  kind: LiveKind<LiveRecord>;
  /** The record's id (txRef or userRef), and its topic in keys and channels. */
  id: string;
  txRef: string;
  /** This watch's member in the subs set (one per watch, so that leaving removes only it). */
  member: string;
  listeners: Set<LiveListener>;
  ready: Promise<void>;
  unsubscribe?: () => void;
  ticker?: NodeJS.Timeout;
  ticking: boolean;
  /** When a heartbeat or event was last heard (epoch ms). */
  heardAt: number;
  /** Start of the txRef's poll sequence, from the heartbeats. */
  sequenceStartedAt?: number;
  /** A cache read for a `changed` message is under way; `again`: another came meanwhile. */
  reading: boolean;
  again: boolean;
  /** Set once a last event arrived or the last listener left: new subscribers open a new one. */
  ended: boolean;
  disposed: boolean;
}

interface Poller {
  txRef: string;
  stop: AbortController;
  startedAt: number;
  beating: boolean;
  done: Promise<void>;
  loop?: PollLoop;
}

/** The Redis {@link LiveStatusHub}. */
export class RedisLiveStatusHub extends LiveHubBase {
  readonly #redis: RedisConnection;
  readonly #messages: LiveMessages;
  readonly #state: SharedState;
  /** Every message between replicas, through the codec (sealed, or clear without personal data). */
  readonly #channels: SealedChannels<LiveMessage>;
  readonly #id = randomUUID();
  readonly #watches = new Map<string, Watch>();
  readonly #pollers = new Map<string, Poller>();
  readonly #beatMs: number;
  readonly #lockMs: number;

  /** `messages`: the codec every message on a live channel goes through (live/messages.ts). */
  constructor(deps: LiveDeps, state: SharedState, messages: LiveMessages) {
    super(deps, new SharedLiveSlots(state));
    if (!state.redis) throw new Error('the Redis live hub needs the Redis state');
    this.#redis = state.redis;
    this.#state = state;
    this.#channels = new SealedChannels(state.channels, messages);
    this.#messages = messages;
    this.#beatMs = deps.settings.heartbeatMs;
    this.#lockMs = 3 * deps.settings.heartbeatMs;
  }

  #keys(txRef: string) {
    return {
      // One hash tag: BEAT touches the lock and the set and publishes on the channel.
      lock: this.#redis.key('live', `{${txRef}}`, 'lock'),
      subs: this.#redis.key(watchers(txRef)),
      channel: this.#redis.key('live', `{${txRef}}`, 'events'),
    };
  }

  protected async join(
    kind: LiveKind<LiveRecord>,
    id: string,
    listener: LiveListener,
  ): Promise<() => void> {
    const txRef = kind.topic(id);
    let watch = this.#watches.get(txRef);
    if (!watch || watch.ended) watch = this.#open(kind, id, txRef);
    const current = watch;
    current.listeners.add(listener);
    await current.ready;
    return () => this.#leave(current, listener);
  }

  #open(kind: LiveKind<LiveRecord>, id: string, txRef: string): Watch {
    const watch: Watch = {
      kind,
      id,
      txRef,
      member: randomUUID(),
      listeners: new Set(),
      ready: Promise.resolve(),
      ticking: false,
      reading: false,
      again: false,
      heardAt: Date.now(),
      ended: false,
      disposed: false,
    };
    this.#watches.set(txRef, watch);
    watch.ready = (async () => {
      watch.unsubscribe = await this.#channels.subscribe(this.#keys(txRef).channel, (message) =>
        this.#receive(watch, message),
      );
      await this.#register(watch);
      watch.heardAt = Date.now();
      // The subscriber has just read the record: a new poller's first poll is one interval on.
      if (!this.#pollers.has(txRef)) await this.#lead(watch, this.deps.settings.pollMs);
      if (watch.ended) return;
      watch.ticker = setInterval(() => void this.#tick(watch), this.#beatMs);
      watch.ticker.unref();
    })().catch(() => undefined);
    return watch;
  }

  #leave(watch: Watch, listener: LiveListener): void {
    watch.listeners.delete(listener);
    if (watch.listeners.size > 0) return;
    watch.ended = true;
    if (this.#watches.get(watch.txRef) === watch) this.#watches.delete(watch.txRef);
    void watch.ready.then(() => this.#dispose(watch));
  }

  async #dispose(watch: Watch): Promise<void> {
    if (watch.disposed) return;
    watch.disposed = true;
    clearInterval(watch.ticker);
    watch.unsubscribe?.();
    await this.#state.orLocally(
      'live',
      () => this.#state.lapsing.remove(watchers(watch.txRef), watch.member),
      () => undefined,
    );
    // If this replica polls, it learns at once whether anyone else still watches.
    const poller = this.#pollers.get(watch.txRef);
    if (poller) await this.#beat(poller);
  }

  #receive(watch: Watch, message: LiveMessage): void {
    watch.heardAt = Date.now();
    if (message.t === 'beat') {
      watch.sequenceStartedAt = message.since;
      // A replica that polled for itself while Redis was away yields to the elected poller.
      const poller = this.#pollers.get(watch.txRef);
      if (poller && message.owner !== this.#id) poller.stop.abort();
      return;
    }
    // This replica's own events were handed to its subscribers already.
    if (message.owner === this.#id) return;
    if (message.t === 'record') this.#received(watch, message.record, message.pushedAt);
    else if (message.t === 'error') {
      this.#deliver(watch, { type: 'error', code: message.code, message: message.message });
    } else void this.#readChanged(watch, message.pushedAt);
  }

  /** A record from another replica; a pushed one is also the latest poll of a poller here. */
  #received(watch: Watch, record: LiveRecord, pushedAt: number | undefined): void {
    if (pushedAt !== undefined) this.#pollers.get(watch.txRef)?.loop?.pushed(record);
    this.#deliver(watch, { type: 'record', record, ...(pushedAt !== undefined && { pushedAt }) });
  }

  /**
   * A clear `changed` message: the record is read from the cache (the replica that fetched it
   * stored it before publishing). One read at a time per watch, however many messages arrive.
   */
  async #readChanged(watch: Watch, pushedAt: number | undefined): Promise<void> {
    if (watch.reading) {
      watch.again = true;
      return;
    }
    watch.reading = true;
    try {
      do {
        watch.again = false;
        const record = await watch.kind
          .read(this.deps.sources, watch.id, false)
          .catch(() => undefined);
        if (record) this.#received(watch, record, pushedAt);
      } while (watch.again && !watch.ended);
    } finally {
      watch.reading = false;
    }
  }

  #deliver(watch: Watch, event: LiveEvent): void {
    if (watch.ended) return;
    if (isLastEvent(watch.kind, event)) {
      watch.ended = true;
      if (this.#watches.get(watch.txRef) === watch) this.#watches.delete(watch.txRef);
    }
    for (const listener of watch.listeners) listener(event);
    this.observePush(watch.kind.source, event, watch.listeners.size);
  }

  /**
   * Sends an event to the other replicas' subscribers of the topic, through the codec: a record
   * travels only sealed; without a key, a `changed` message sends them to the cache instead.
   */
  #publish(txRef: string, event: LiveEvent): void {
    const owner = this.#id;
    const pushed = event.type === 'record' &&
      event.pushedAt !== undefined && { pushedAt: event.pushedAt };
    const message: LiveMessage =
      event.type === 'error'
        ? { t: 'error', owner, code: event.code, message: event.message }
        : this.#messages.sealed
          ? { t: 'record', owner, record: event.record, ...pushed }
          : { t: 'changed', owner, ...pushed };
    const { channel } = this.#keys(txRef);
    void this.#state.orLocally(
      'live',
      () => this.#channels.publish(channel, message),
      () => undefined,
    );
  }

  async push(source: LiveSource, id: string, record: LiveRecord, pushedAt: number): Promise<void> {
    const txRef = kindOf(source).topic(id);
    const event: LiveEvent = { type: 'record', record, pushedAt };
    this.#pollers.get(txRef)?.loop?.pushed(record);
    const watch = this.#watches.get(txRef);
    if (watch) this.#deliver(watch, event);
    this.#publish(txRef, event);
  }

  /** Registers (or renews) a watch in the cluster's set of watches, until three beats on. */
  async #register(watch: Watch): Promise<void> {
    await this.#state.orLocally(
      'live',
      async () => {
        await this.#state.lapsing.add(
          watchers(watch.txRef),
          watch.member,
          this.#lockMs,
          Number.MAX_SAFE_INTEGER,
        );
      },
      () => undefined,
    );
  }

  /** Every beat, per watched txRef: stay registered; take over from a silent poller. */
  async #tick(watch: Watch): Promise<void> {
    if (watch.ended || watch.ticking) return;
    watch.ticking = true;
    try {
      await this.#register(watch);
      if (this.#pollers.has(watch.txRef) || watch.ended) return;
      if (Date.now() - watch.heardAt <= this.#lockMs) return;
      await this.#lead(watch, 0);
    } finally {
      watch.ticking = false;
    }
  }

  /** Tries to become the txRef's poller; polls alone, unelected, when Redis fails. */
  async #lead(watch: Watch, firstDelayMs: number): Promise<void> {
    const { lock } = this.#keys(watch.txRef);
    let won: boolean;
    try {
      const reply = await this.#redis.run((client) =>
        client.set(lock, this.#id, {
          condition: 'NX',
          expiration: { type: 'PX', value: this.#lockMs },
        }),
      );
      won = reply === 'OK';
    } catch {
      this.#redis.failed('live');
      won = true;
    }
    if (watch.ended || this.#pollers.has(watch.txRef)) {
      // Everyone left meanwhile: free the lock now rather than when it expires.
      if (won) await this.#redis.script(RELEASE_LEASE, [lock], [this.#id]).catch(() => undefined);
      return;
    }
    if (won) {
      this.#startPoller(watch, firstDelayMs, watch.sequenceStartedAt ?? Date.now());
    } else if (firstDelayMs === 0) {
      // The lock is held but nothing is heard: read through the cache, which polls write.
      const record = await watch.kind
        .read(this.deps.sources, watch.id, false)
        .catch(() => undefined);
      if (record) this.#deliver(watch, { type: 'record', record });
    }
  }

  #startPoller(watch: Watch, firstDelayMs: number, startedAt: number): void {
    const { txRef } = watch;
    const { lock } = this.#keys(txRef);
    const poller: Poller = {
      txRef,
      stop: new AbortController(),
      startedAt,
      beating: false,
      done: Promise.resolve(),
    };
    this.#pollers.set(txRef, poller);
    this.deps.observer?.pollers(1);
    const timer = setInterval(() => void this.#beat(poller), this.#beatMs);
    timer.unref();
    void this.#beat(poller);
    poller.loop = startPoller(this.deps, {
      kind: watch.kind,
      id: watch.id,
      startedAt,
      firstDelayMs,
      signal: poller.stop.signal,
      publish: (event) => {
        const current = this.#watches.get(txRef);
        if (current) this.#deliver(current, event);
        this.#publish(txRef, event);
      },
    });
    poller.done = poller.loop.done.finally(async () => {
      clearInterval(timer);
      if (this.#pollers.get(txRef) === poller) this.#pollers.delete(txRef);
      this.deps.observer?.pollers(-1);
      // Sent after the last PUBLISH on the same connection, so it reaches Redis after it.
      await this.#redis.script(RELEASE_LEASE, [lock], [this.#id]).catch(() => undefined);
    });
  }

  /** Renews the lock, says the poller is alive, and stops it when no one watches any more. */
  async #beat(poller: Poller): Promise<void> {
    if (poller.beating || poller.stop.signal.aborted) return;
    poller.beating = true;
    const { lock, subs, channel } = this.#keys(poller.txRef);
    const message = this.#messages.seal(channel, {
      t: 'beat',
      owner: this.#id,
      since: poller.startedAt,
    });
    try {
      const watches = Number(
        await this.#redis.script(
          BEAT,
          [lock, subs],
          [this.#id, String(this.#lockMs), channel, message, publishCommand(this.#redis)],
        ),
      );
      // -1: another replica holds the lock (this one stalled, or polled unelected).
      if (watches < 0 || (watches === 0 && !this.#watchesHere(poller.txRef))) {
        poller.stop.abort();
      }
    } catch {
      this.#redis.failed('live');
      // Without Redis this poller serves only this replica's subscribers.
      if (!this.#watchesHere(poller.txRef)) poller.stop.abort();
    } finally {
      poller.beating = false;
    }
  }

  #watchesHere(txRef: string): boolean {
    const watch = this.#watches.get(txRef);
    return watch !== undefined && watch.listeners.size > 0;
  }

  async close(): Promise<void> {
    this.endWatches();
    const pollers = [...this.#pollers.values()];
    for (const poller of pollers) poller.stop.abort();
    const watches = [...this.#watches.values()];
    for (const watch of watches) {
      watch.ended = true;
      this.#watches.delete(watch.txRef);
    }
    await Promise.allSettled([
      ...pollers.map((poller) => poller.done),
      ...watches.map((watch) => watch.ready.then(() => this.#dispose(watch))),
    ]);
  }
}
