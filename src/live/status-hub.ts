/**
 * The live hub: ONE poller per record for every replica, over the state layer (src/state/). On
 * the memory state this process is a cluster of one; on Redis every replica shares the leases,
 * the sets and the channels. Keys and channels name a record by its topic
 * ({@link LiveKind.topic}: the txRef, or a digest of the userRef); "txRef" below stands for
 * either.
 *
 * - Election: the lease `{live:lock:<txRef>}` (state/lease.ts), held for three beats. The holder
 *   polls (bypassing the cache and writing it) and, every beat (`LIVE_HEARTBEAT_MS`), renews the
 *   lease (or takes it again if it lapsed and is free), counts the watches still open and
 *   publishes a heartbeat.
 * - Fan-out: the poller publishes each status change on the channel `live:{<txRef>}:events`
 *   (state/channel.ts); every replica with subscribers for that txRef listens there and hands
 *   the events to its own. Every message goes through live/messages.ts (sealed with the cache
 *   key, or clear and without personal data: then receivers read the record from the cache).
 * - Who watches: each local watch is a member of the lapsing set `live:{<txRef>}:subs`
 *   (state/lapsing.ts), held three beats and renewed every beat. The poller stops when the set
 *   is empty: the last subscriber of the cluster left, or its replica died (its members lapse).
 * - Takeover: a replica whose subscribers heard nothing for three beats tries to take the lease
 *   (free once the silent poller's lapsed) and polls from then on, continuing the sequence's
 *   backoff (the heartbeats carry its start). Should the lease stay held while nothing is
 *   heard, it reads the record through the cache each beat, so its subscribers still see
 *   changes.
 * - Redis down: the lease can't be taken, so each replica with subscribers polls for its own
 *   (as a cluster of one); when Redis is back, the first to take the lease keeps polling and
 *   the others stop at its first heartbeat.
 * - Pushed records (a notification, src/webhooks/): the replica that fetched one hands it to its
 *   own subscribers and publishes it as an event on the channel, like a poller's; the replica
 *   that polls the record takes it as its latest poll and waits longer before the next.
 *
 * The subscriber's side: a first read (through the cache, so that many subscribers cost one
 * upstream call), then the poller's and the notifications' events, one caller holding at most
 * `LIVE_MAX_PER_CALLER` watches across replicas (live/slots.ts).
 */
import { randomUUID } from 'node:crypto';
import { BadUserInputError, GatewayError } from '../errors.ts';
import { RECORD_FORMAT, type UpstreamKycUser, type UpstreamTransaction } from '../model/records.ts';
import { outsideRequests } from '../observability/request-context.ts';
import { SealedChannels } from '../state/channel.ts';
import type { SharedState } from '../state/index.ts';
import type { Lease } from '../state/lease.ts';
import {
  isLastEvent,
  KYC,
  kindOf,
  type LiveClock,
  type LiveDeps,
  type LiveEvent,
  type LiveKind,
  type LiveListener,
  type LiveRecord,
  type LiveSource,
  type LiveStatusHub,
  type Poller as PollLoop,
  startPoller,
  systemClock,
  TRANSACTION,
} from './hub.ts';
import type { LiveMessage, LiveMessages } from './messages.ts';
import { type LiveSlots, SharedLiveSlots } from './slots.ts';

const WATCH_TIME_OVER = 'The transaction did not reach a final status within the watch time.';
const SHUTTING_DOWN = 'The gateway is shutting down; subscribe again.';

/** The lease that elects a topic's poller. */
const lockName = (txRef: string): string => `live:lock:${txRef}`;
/** The lapsing set of the cluster's watches of a topic. */
const watchers = (txRef: string): string => `live:{${txRef}}:subs`;
/** The channel of a topic's events and heartbeats (its watches' hash tag: one shard). */
export const eventsChannel = (state: SharedState, txRef: string): string =>
  state.key('live', `{${txRef}}`, 'events');

/** Events waiting for one subscriber, read one at a time. */
class Inbox {
  readonly #events: LiveEvent[] = [];
  readonly #clock: LiveClock;
  #wake: (() => void) | undefined;

  constructor(clock: LiveClock) {
    this.#clock = clock;
  }

  push = (event: LiveEvent): void => {
    this.#events.push(event);
    this.#wake?.();
  };

  /** The next event; `aborted` when the signal fires, `timeout` at the deadline (epoch ms). */
  async next(signal: AbortSignal, deadline: number): Promise<LiveEvent | 'aborted' | 'timeout'> {
    for (;;) {
      if (signal.aborted) return 'aborted';
      const event = this.#events.shift();
      if (event) return event;
      const left = deadline - this.#clock.now();
      if (left <= 0) return 'timeout';
      const woken = new AbortController();
      const wake = () => woken.abort();
      signal.addEventListener('abort', wake, { once: true });
      this.#wake = wake;
      await this.#clock.sleep(left, woken.signal);
      signal.removeEventListener('abort', wake);
      this.#wake = undefined;
    }
  }
}

interface Watch {
  kind: LiveKind<LiveRecord>;
  /** The record's id (txRef or userRef), and its topic in keys and channels. */
  id: string;
  txRef: string;
  /** This watch's member in the set of watches (one per watch: leaving removes only it). */
  member: string;
  listeners: Set<LiveListener>;
  ready: Promise<void>;
  unsubscribe?: () => void;
  stopTicks?: () => void;
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
  /** The lease held; undefined while polling unelected (the state failed). */
  lease: Lease | undefined;
  stop: AbortController;
  startedAt: number;
  beating: boolean;
  done: Promise<void>;
  loop?: PollLoop;
}

/** The {@link LiveStatusHub}, over the state layer. */
export class LiveHub implements LiveStatusHub {
  readonly #deps: LiveDeps;
  readonly #clock: LiveClock;
  readonly #state: SharedState;
  readonly #messages: LiveMessages;
  /** Every message between replicas, through the codec (sealed, or clear without personal data). */
  readonly #channels: SealedChannels<LiveMessage>;
  /** Watches open per caller, across replicas. */
  readonly #slots: LiveSlots;
  readonly #id = randomUUID();
  readonly #inboxes = new Set<Inbox>();
  readonly #watches = new Map<string, Watch>();
  readonly #pollers = new Map<string, Poller>();
  readonly #beatMs: number;
  readonly #lockMs: number;
  #closed = false;

  /** `messages`: the codec every message on a live channel goes through (live/messages.ts). */
  constructor(deps: LiveDeps, state: SharedState, messages: LiveMessages) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#state = state;
    this.#messages = messages;
    this.#channels = new SealedChannels(state.channels, messages);
    this.#slots = new SharedLiveSlots(state, undefined, this.#clock);
    this.#beatMs = deps.settings.heartbeatMs;
    this.#lockMs = 3 * deps.settings.heartbeatMs;
  }

  watch(txRef: string, signal: AbortSignal, caller: string): AsyncGenerator<UpstreamTransaction> {
    return this.#watch(TRANSACTION, txRef, signal, caller);
  }

  watchKyc(userRef: string, signal: AbortSignal, caller: string): AsyncGenerator<UpstreamKycUser> {
    return this.#watch(KYC, userRef, signal, caller);
  }

  async *#watch<T extends LiveRecord>(
    kind: LiveKind<T>,
    id: string,
    signal: AbortSignal,
    caller: string,
  ): AsyncGenerator<T> {
    if (this.#closed) throw new GatewayError('UPSTREAM_UNAVAILABLE', SHUTTING_DOWN);
    const max = this.#deps.settings.maxPerCaller;
    const release = await this.#slots.take(caller, max);
    if (!release) {
      throw new GatewayError(
        'RATE_LIMITED',
        `This caller already follows ${max} records; end one before starting another.`,
      );
    }
    try {
      yield* this.#follow(kind, id, signal);
    } finally {
      release();
    }
  }

  async *#follow<T extends LiveRecord>(
    kind: LiveKind<T>,
    id: string,
    signal: AbortSignal,
  ): AsyncGenerator<T> {
    const { sources, settings, observer } = this.#deps;
    const deadline = this.#clock.now() + settings.maxWatchMs;
    let record = await kind.read(sources, id, false);
    // A final record ends the stream, and is what a merchant acts on: it is asked of the upstream
    // now, never taken from the cache (a payment stored as SUCCESSFUL may since have been reversed).
    if (record !== null && kind.isFinal(record)) record = await kind.read(sources, id, true);
    if (record === null) throw new BadUserInputError(kind.unknown);
    if (kind.isFinal(record)) {
      yield record;
      return;
    }
    const inbox = new Inbox(this.#clock);
    this.#inboxes.add(inbox);
    observer?.subscribers(1);
    // The poller this may start serves every subscriber of the record, not this request alone.
    const leave = await outsideRequests(() =>
      this.#join(kind as LiveKind<LiveRecord>, id, inbox.push),
    );
    try {
      // Read again now that events are coming: a change published between the first read and
      // joining is in the cache (pollers write it before they publish).
      record = (await kind.read(sources, id, false).catch(() => record)) ?? record;
      let version = kind.version(record);
      yield record;
      while (!kind.isFinal(record)) {
        const event = await inbox.next(signal, deadline);
        if (event === 'aborted') return;
        if (event === 'timeout') {
          if (kind.endsWithError) throw new GatewayError('UPSTREAM_TIMEOUT', WATCH_TIME_OVER);
          return;
        }
        if (event.type === 'error') throw new GatewayError(event.code, event.message);
        // The hub delivers a topic's events only to that topic's watches: records of this kind.
        const next = event.record as T;
        const nextVersion = kind.version(next);
        if (nextVersion !== version) {
          version = nextVersion;
          record = next;
          yield next;
        }
      }
    } finally {
      leave();
      this.#inboxes.delete(inbox);
      observer?.subscribers(-1);
    }
  }

  /**
   * Starts delivering the record's events to `listener` (and makes sure someone polls it);
   * resolves, once listening, to the function that stops.
   */
  async #join(kind: LiveKind<LiveRecord>, id: string, listener: LiveListener): Promise<() => void> {
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
      heardAt: this.#clock.now(),
      ended: false,
      disposed: false,
    };
    this.#watches.set(txRef, watch);
    watch.ready = (async () => {
      watch.unsubscribe = await this.#channels.subscribe(
        eventsChannel(this.#state, txRef),
        (message) => this.#receive(watch, message),
      );
      await this.#register(watch);
      watch.heardAt = this.#clock.now();
      // The subscriber has just read the record: a new poller's first poll is one interval on.
      if (!this.#pollers.has(txRef)) await this.#lead(watch, this.#deps.settings.pollMs);
      if (watch.ended) return;
      watch.stopTicks = this.#clock.every(this.#beatMs, () => void this.#tick(watch));
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
    watch.stopTicks?.();
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
    watch.heardAt = this.#clock.now();
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
          .read(this.#deps.sources, watch.id, false)
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
    const count = watch.listeners.size;
    if (event.type === 'record' && event.pushedAt !== undefined && count > 0) {
      const delayMs = Math.max(0, this.#clock.now() - event.pushedAt);
      this.#deps.observer?.pushed?.(watch.kind.source, delayMs, count);
    }
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
          ? { t: 'record', owner, record: event.record, f: RECORD_FORMAT, ...pushed }
          : { t: 'changed', owner, ...pushed };
    void this.#state.orLocally(
      'live',
      () => this.#channels.publish(eventsChannel(this.#state, txRef), message),
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
      if (this.#clock.now() - watch.heardAt <= this.#lockMs) return;
      await this.#lead(watch, 0);
    } finally {
      watch.ticking = false;
    }
  }

  /** Tries to become the txRef's poller; polls alone, unelected, when the state fails. */
  async #lead(watch: Watch, firstDelayMs: number): Promise<void> {
    const taken = await this.#state.orLocally<Lease | 'alone' | undefined>(
      'live',
      () => this.#state.leases.take(lockName(watch.txRef), this.#lockMs),
      () => 'alone',
    );
    if (watch.ended || this.#pollers.has(watch.txRef)) {
      // Everyone left meanwhile: free the lease now rather than when it lapses.
      if (taken && taken !== 'alone') await taken.release().catch(() => undefined);
      return;
    }
    if (taken) {
      const lease = taken === 'alone' ? undefined : taken;
      this.#startPoller(watch, lease, firstDelayMs, watch.sequenceStartedAt ?? this.#clock.now());
    } else if (firstDelayMs === 0) {
      // The lease is held but nothing is heard: read through the cache, which polls write.
      const record = await watch.kind
        .read(this.#deps.sources, watch.id, false)
        .catch(() => undefined);
      if (record) this.#deliver(watch, { type: 'record', record });
    }
  }

  #startPoller(
    watch: Watch,
    lease: Lease | undefined,
    firstDelayMs: number,
    startedAt: number,
  ): void {
    const { txRef } = watch;
    const poller: Poller = {
      txRef,
      lease,
      stop: new AbortController(),
      startedAt,
      beating: false,
      done: Promise.resolve(),
    };
    this.#pollers.set(txRef, poller);
    this.#deps.observer?.pollers(1);
    const stopBeats = this.#clock.every(this.#beatMs, () => void this.#beat(poller));
    void this.#beat(poller);
    poller.loop = startPoller(this.#deps, {
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
      stopBeats();
      if (this.#pollers.get(txRef) === poller) this.#pollers.delete(txRef);
      this.#deps.observer?.pollers(-1);
      // Sent after the last publish on the same connection, so it reaches Redis after it.
      await poller.lease?.release().catch(() => undefined);
    });
  }

  /**
   * Renews the lease (or takes it again when it lapsed and is free), says the poller is alive,
   * and stops it when another holds the lease or no one watches any more.
   */
  async #beat(poller: Poller): Promise<void> {
    if (poller.beating || poller.stop.signal.aborted) return;
    poller.beating = true;
    const { txRef } = poller;
    const { leases, lapsing } = this.#state;
    try {
      const watches = await this.#state.orLocally<number | undefined>(
        'live',
        async () => {
          if (!(await poller.lease?.renew(this.#lockMs))) {
            poller.lease = await leases.take(lockName(txRef), this.#lockMs);
            if (!poller.lease) return -1;
          }
          const left = await lapsing.count(watchers(txRef));
          const beat: LiveMessage = { t: 'beat', owner: this.#id, since: poller.startedAt };
          await this.#channels.publish(eventsChannel(this.#state, txRef), beat);
          return left;
        },
        () => undefined,
      );
      // -1: another replica holds the lease (this one stalled, or polled unelected). Without
      // the state (undefined), this poller serves only this replica's subscribers.
      const here = this.#watchesHere(txRef);
      if (watches === undefined ? !here : watches < 0 || (watches === 0 && !here)) {
        poller.stop.abort();
      }
    } finally {
      poller.beating = false;
    }
  }

  #watchesHere(txRef: string): boolean {
    const watch = this.#watches.get(txRef);
    return watch !== undefined && watch.listeners.size > 0;
  }

  /** Stops every poller and ends every watch (their streams end with an error saying why). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const inbox of this.#inboxes) {
      inbox.push({ type: 'error', code: 'UPSTREAM_UNAVAILABLE', message: SHUTTING_DOWN });
    }
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
