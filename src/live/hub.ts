/**
 * Live records behind `Subscription.transactionStatus` and `Subscription.kycStatus`: one poller
 * per record, whatever the number of subscribers, fanning its results out to all of them; and
 * records pushed by signed notifications (src/webhooks/), handed to the same subscribers at once.
 *
 * The hub itself is live/status-hub.ts (one hub over the state layer: this process alone is a
 * cluster of one). This module holds its parts: the kinds of record, the settings, the clock
 * and the poll loop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordSources } from '../cache/sources.ts';
import { type ErrorCode, GatewayError, UpstreamError } from '../errors.ts';
import type { UpstreamKycUser, UpstreamTransaction } from '../model/records.ts';
import { isFinalStatus } from '../model/status.ts';
import { hashedKeyPart } from '../state/index.ts';

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

/**
 * The hub's time: its clock, its waits and its beats. Tests pass a fake one and move it; the
 * state the hub runs over reads the same clock.
 */
export interface LiveClock {
  now(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `tick` every `ms` until the function returned is called; keeps no process alive. */
  every(ms: number, tick: () => void): () => void;
}

/** The process's clock and timers. */
export const systemClock: LiveClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal }).catch(() => undefined),
  every: (ms, tick) => {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

export interface LiveDeps {
  sources: RecordSources;
  settings: LiveSettings;
  observer?: LiveObserver;
  /** {@link systemClock} when absent. */
  clock?: LiveClock;
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
  const { sources, settings, observer, clock = systemClock } = deps;
  const { kind, id, signal, publish } = options;
  let delay = options.firstDelayMs;
  let nextAt = clock.now() + delay;
  let factor = 1;
  let last: string | undefined;
  const interval = (): number =>
    clock.now() - options.startedAt > 60_000
      ? Math.min(Math.max(delay, settings.pollMs) * 2, settings.maxPollMs)
      : settings.pollMs;
  const run = async (): Promise<void> => {
    for (;;) {
      // A push may move `nextAt` on while this sleeps: sleep again until it is reached.
      for (let wait = nextAt - clock.now(); wait > 0; wait = nextAt - clock.now()) {
        await clock.sleep(wait, signal);
        if (signal.aborted) return;
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
      nextAt = clock.now() + delay * factor;
    }
  };
  return {
    done: run(),
    pushed: (record) => {
      last = kind.version(record);
      factor = Math.max(1, settings.pushedPollFactor ?? 1);
      nextAt = Math.max(nextAt, clock.now() + Math.max(delay, settings.pollMs) * factor);
    },
  };
}
