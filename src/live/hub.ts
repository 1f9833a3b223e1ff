/**
 * Live records behind `Subscription.transactionStatus` and `Subscription.kycStatus`: one poller
 * per record, whatever the number of subscribers, fanning its results out to all of them; and
 * records pushed by signed notifications (src/webhooks/), handed to the same subscribers at once.
 *
 * Two implementations: {@link MemoryLiveStatusHub} (one process: a poller per record in this
 * process) and {@link RedisLiveStatusHub} (a cluster: one poller per record for all replicas,
 * elected by a Redis lock, its results and the pushed records fanned out by Redis pub/sub). This
 * module holds what both share: the kinds of record, the subscriber's side of a watch, and the
 * poll loop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordSources } from '../cache/sources.ts';
import { BadUserInputError, type ErrorCode, GatewayError, UpstreamError } from '../errors.ts';
import type { UpstreamKycUser, UpstreamTransaction } from '../model/records.ts';
import { isFinalStatus } from '../model/status.ts';
import { outsideRequests } from '../observability/request-context.ts';
import { hashedKeyPart } from '../state/redis.ts';
import { type LiveSlots, MemoryLiveSlots } from './slots.ts';

/** A record a live subscription follows. */
export type LiveRecord = UpstreamTransaction | UpstreamKycUser;

/** The two sources of live records (also the `source` of the webhook metrics). */
export type LiveSource = 'payment' | 'kyc';

/**
 * What differs between following a transaction and following a user's KYC: how the record is
 * read, what counts as a change, when the watch is over, and the topic that names the record in
 * keys and channels (no person in clear).
 */
export interface LiveKind<T extends LiveRecord> {
  source: LiveSource;
  read(sources: RecordSources, id: string, bypassCache: boolean): Promise<T | null>;
  /** Subscribers get a record only when this differs from the last one they got. */
  version(record: T): string;
  /** A record after which nothing changes any more: the watch ends with it. */
  isFinal(record: T): boolean;
  topic(id: string): string;
  unknown: string;
  /** At the end of the watch time: an error (`UPSTREAM_TIMEOUT`), or a quiet completion. */
  endsWithError: boolean;
}

export const TRANSACTION: LiveKind<UpstreamTransaction> = {
  source: 'payment',
  read: (sources, txRef, bypassCache) => sources.transaction(txRef, { bypassCache }),
  version: (record) => record.status,
  isFinal: (record) => isFinalStatus(record.status),
  // The txRef itself, as before KYC joined: keys and channels of a rolling deploy still match.
  topic: (txRef) => txRef,
  unknown: 'The payment service does not know this transaction.',
  endsWithError: true,
};

export const KYC: LiveKind<UpstreamKycUser> = {
  source: 'kyc',
  read: (sources, userRef, bypassCache) => sources.kycUser(userRef, { bypassCache }),
  // What kycStatus promises to report: the level, the verification, and each level's and
  // check's status (not the times, which every new attempt touches).
  version: (user) =>
    JSON.stringify([
      user.level,
      user.verified,
      user.levels.map((l) => [l.level, l.verified, l.checks.map((c) => [c.name, c.passed])]),
    ]),
  isFinal: () => false,
  topic: (userRef) => `kyc:${hashedKeyPart(userRef)}`,
  unknown: 'The KYC service does not know this user.',
  endsWithError: false,
};

/** The kind of a source. */
export function kindOf(source: LiveSource): LiveKind<LiveRecord> {
  return (source === 'payment' ? TRANSACTION : KYC) as LiveKind<LiveRecord>;
}

/**
 * What a poller, or a pushed notification, tells the subscribers of a record. `pushedAt`: when
 * the notification that led to this record arrived (epoch ms), for the push delay metric.
 */
export type LiveEvent =
  | { type: 'record'; record: LiveRecord; pushedAt?: number }
  | { type: 'error'; code: ErrorCode; message: string };

export type LiveListener = (event: LiveEvent) => void;

/** True for an event after which the poller stops (a final record, or an error). */
export function isLastEvent(kind: LiveKind<LiveRecord>, event: LiveEvent): boolean {
  return event.type === 'error' || kind.isFinal(event.record);
}

/** Live status settings (config `live`), in ms. */
export interface LiveSettings {
  pollMs: number;
  maxPollMs: number;
  maxWatchMs: number;
  heartbeatMs: number;
  /** Watches one caller may hold at once (across replicas with Redis). */
  maxPerCaller: number;
  /**
   * How many times longer polls wait for a record that notifications cover (one arrived for
   * it): the notifications carry its changes, the polls are the fallback. Absent or 1: the same.
   */
  pushedPollFactor?: number;
}

/** Counts for metrics: no txRef or record ever passes here. */
export interface LiveObserver {
  /** Local subscribers came (+1) or went (-1). */
  subscribers(delta: number): void;
  /** This process started (+1) or stopped (-1) polling a txRef. */
  pollers(delta: number): void;
  /** One poll of the upstream, and how it went. */
  poll(outcome: 'ok' | 'error'): void;
  /** A pushed record reached `count` local subscribers, `delayMs` after its notification. */
  pushed?(source: LiveSource, delayMs: number, count: number): void;
}

export interface LiveDeps {
  sources: RecordSources;
  settings: LiveSettings;
  observer?: LiveObserver;
}

/** Follows records: transactions until a final status, KYC users until the watch time ends. */
export interface LiveStatusHub {
  /**
   * The transaction's record at once, then each record whose status differs from the last one
   * given; ends after a final status, or when `signal` aborts. Throws `BAD_USER_INPUT` for an
   * unknown reference, `UPSTREAM_TIMEOUT` past the watch time, and `RATE_LIMITED` when `caller`
   * already holds its most watches.
   */
  watch(txRef: string, signal: AbortSignal, caller: string): AsyncGenerator<UpstreamTransaction>;
  /**
   * The user's KYC details at once, then each time the level, the verification or a level's
   * or check's status changes; ends quietly at the watch time, or when `signal` aborts. Throws
   * as `watch` does (`BAD_USER_INPUT` for an unknown user).
   */
  watchKyc(userRef: string, signal: AbortSignal, caller: string): AsyncGenerator<UpstreamKycUser>;
  /**
   * Hands a record just fetched fresh because a notification named it (arrived at `pushedAt`)
   * to its subscribers on every replica, and makes its poller wait longer from now on.
   */
  push(source: LiveSource, id: string, record: LiveRecord, pushedAt: number): Promise<void>;
  /** Stops every poller and ends every watch (graceful shutdown). */
  close(): Promise<void>;
}

const WATCH_TIME_OVER = 'The transaction did not reach a final status within the watch time.';
const SHUTTING_DOWN = 'The gateway is shutting down; subscribe again.';

/** Events waiting for one subscriber, read one at a time. */
class Inbox {
  readonly #events: LiveEvent[] = [];
  #wake: (() => void) | undefined;

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
      const left = deadline - Date.now();
      if (left <= 0) return 'timeout';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        signal.addEventListener('abort', done, { once: true });
        this.#wake = done;
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
      });
      this.#wake = undefined;
    }
  }
}

/**
 * The subscriber's side, common to both hubs: a first read (through the cache, so that many
 * subscribers cost one upstream call), then the poller's and the notifications' events.
 */
export abstract class LiveHubBase implements LiveStatusHub {
  protected readonly deps: LiveDeps;
  protected closed = false;
  readonly #inboxes = new Set<Inbox>();
  /** Watches open per caller: in this process, or across replicas (Redis). */
  readonly #slots: LiveSlots;

  constructor(deps: LiveDeps, slots: LiveSlots = new MemoryLiveSlots()) {
    this.deps = deps;
    this.#slots = slots;
  }

  /**
   * Starts delivering the record's events to `listener` (and makes sure someone polls it);
   * resolves, once listening, to the function that stops.
   */
  protected abstract join(
    kind: LiveKind<LiveRecord>,
    id: string,
    listener: LiveListener,
  ): Promise<() => void>;

  abstract push(
    source: LiveSource,
    id: string,
    record: LiveRecord,
    pushedAt: number,
  ): Promise<void>;

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
    if (this.closed) throw new GatewayError('UPSTREAM_UNAVAILABLE', SHUTTING_DOWN);
    const max = this.deps.settings.maxPerCaller;
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
    const { sources, settings, observer } = this.deps;
    const deadline = Date.now() + settings.maxWatchMs;
    let record = await kind.read(sources, id, false);
    // A final record ends the stream, and is what a merchant acts on: it is asked of the upstream
    // now, never taken from the cache (a payment stored as SUCCESSFUL may since have been reversed).
    if (record !== null && kind.isFinal(record)) record = await kind.read(sources, id, true);
    if (record === null) throw new BadUserInputError(kind.unknown);
    if (kind.isFinal(record)) {
      yield record;
      return;
    }
    const inbox = new Inbox();
    this.#inboxes.add(inbox);
    observer?.subscribers(1);
    // The poller this may start serves every subscriber of the record, not this request alone.
    const leave = await outsideRequests(() =>
      this.join(kind as LiveKind<LiveRecord>, id, inbox.push),
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

  /** Ends the watches still open (their streams end with an error saying why). */
  protected endWatches(): void {
    this.closed = true;
    for (const inbox of this.#inboxes) {
      inbox.push({ type: 'error', code: 'UPSTREAM_UNAVAILABLE', message: SHUTTING_DOWN });
    }
  }

  /** Counts a pushed record handed to `count` local subscribers. */
  protected observePush(source: LiveSource, event: LiveEvent, count: number): void {
    if (event.type !== 'record' || event.pushedAt === undefined || count === 0) return;
    this.deps.observer?.pushed?.(source, Math.max(0, Date.now() - event.pushedAt), count);
  }

  abstract close(): Promise<void>;
}

export interface PollOptions {
  kind: LiveKind<LiveRecord>;
  id: string;
  /** When this record's poll sequence began (epoch ms): after a minute, the interval grows. */
  startedAt: number;
  /** Wait before the first poll (ms): 0 when taking over, one interval after a first read. */
  firstDelayMs: number;
  signal: AbortSignal;
  publish: (event: LiveEvent) => void;
}

/** A running poll loop's handle: its end, and how a pushed record reaches it. */
export interface Poller {
  done: Promise<void>;
  /**
   * A notification covered this record and it was just fetched fresh: the next poll is a
   * whole interval (times `pushedPollFactor`) from now, and every later one waits that long too.
   */
  pushed(record: LiveRecord): void;
}

/**
 * Polls the upstream (bypassing the cache, and writing it) until a final record, an unknown
 * reference, an unexpected error, or `signal`. Publishes each record whose version differs from
 * the previous poll's, and errors that end the watch. Every `pollMs` during the sequence's first
 * minute, then doubling up to `maxPollMs`; `pushedPollFactor` times that once a notification has
 * covered the record. A passing upstream failure does not end the watch.
 */
export function startPoller(deps: LiveDeps, options: PollOptions): Poller {
  const { sources, settings, observer } = deps;
  const { kind, id, signal, publish } = options;
  let delay = options.firstDelayMs;
  let nextAt = Date.now() + delay;
  let factor = 1;
  let last: string | undefined;
  const interval = (): number =>
    Date.now() - options.startedAt > 60_000
      ? Math.min(Math.max(delay, settings.pollMs) * 2, settings.maxPollMs)
      : settings.pollMs;
  const run = async (): Promise<void> => {
    for (;;) {
      // A push may move `nextAt` on while this sleeps: sleep again until it is reached.
      for (let wait = nextAt - Date.now(); wait > 0; wait = nextAt - Date.now()) {
        try {
          await sleep(wait, undefined, { signal });
        } catch {
          return;
        }
      }
      if (signal.aborted) return;
      let record: LiveRecord | null | undefined;
      try {
        record = await kind.read(sources, id, true);
        observer?.poll('ok');
      } catch (error) {
        observer?.poll('error');
        if (signal.aborted) return;
        if (!(error instanceof UpstreamError)) {
          publish({
            type: 'error',
            code: error instanceof GatewayError ? error.code : 'INTERNAL_SERVER_ERROR',
            message: error instanceof GatewayError ? error.message : 'Unexpected error.',
          });
          return;
        }
      }
      if (signal.aborted) return;
      if (record === null) {
        publish({ type: 'error', code: 'BAD_USER_INPUT', message: kind.unknown });
        return;
      }
      if (record) {
        const version = kind.version(record);
        if (version !== last) {
          last = version;
          publish({ type: 'record', record });
        }
        if (kind.isFinal(record)) return;
      }
      delay = interval();
      nextAt = Date.now() + delay * factor;
    }
  };
  return {
    done: run(),
    pushed: (record) => {
      last = kind.version(record);
      factor = Math.max(1, settings.pushedPollFactor ?? 1);
      nextAt = Math.max(nextAt, Date.now() + Math.max(delay, settings.pollMs) * factor);
    },
  };
}
