/**
 * Live transaction status behind `Subscription.transactionStatus`: one poller per
 * txRef, whatever the number of subscribers, fanning its results out to all of them.
 *
 * Two implementations: {@link MemoryLiveStatusHub} (one process: a poller per txRef in this
 * process) and {@link RedisLiveStatusHub} (a cluster: one poller per txRef for all replicas,
 * elected by a Redis lock, its results fanned out by Redis pub/sub). This module holds what both
 * share: the subscriber's side of a watch, and the poll loop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordSources } from '../cache/sources.ts';
import { BadUserInputError, type ErrorCode, GatewayError, UpstreamError } from '../errors.ts';
import { isFinalStatus } from '../model/status.ts';
import { outsideRequests } from '../observability/request-context.ts';
import type { UpstreamTransaction } from '../upstream/shapes.ts';
import { type LiveSlots, MemoryLiveSlots } from './slots.ts';

/** What a poller tells the subscribers of a txRef. */
export type LiveEvent =
  | { type: 'record'; record: UpstreamTransaction }
  | { type: 'error'; code: ErrorCode; message: string };

export type LiveListener = (event: LiveEvent) => void;

/** True for an event after which the poller stops (a final status, or an error). */
export function isLastEvent(event: LiveEvent): boolean {
  return event.type === 'error' || isFinalStatus(event.record.status);
}

/** Live status settings (config `live`), in ms. */
export interface LiveSettings {
  pollMs: number;
  maxPollMs: number;
  maxWatchMs: number;
  heartbeatMs: number;
  /** Watches one caller may hold at once (across replicas with Redis). */
  maxPerCaller: number;
}

/** Counts for metrics: no txRef or record ever passes here. */
export interface LiveObserver {
  /** Local subscribers came (+1) or went (-1). */
  subscribers(delta: number): void;
  /** This process started (+1) or stopped (-1) polling a txRef. */
  pollers(delta: number): void;
  /** One poll of the upstream, and how it went. */
  poll(outcome: 'ok' | 'error'): void;
}

export interface LiveDeps {
  sources: RecordSources;
  settings: LiveSettings;
  observer?: LiveObserver;
}

/** Follows transactions until they reach a final status. */
export interface LiveStatusHub {
  /**
   * The transaction's record at once, then each record whose status differs from the last one
   * given; ends after a final status, or when `signal` aborts. Throws `BAD_USER_INPUT` for an
   * unknown reference, `UPSTREAM_TIMEOUT` past the watch time, and `RATE_LIMITED` when `caller`
   * already holds its most watches.
   */
  watch(txRef: string, signal: AbortSignal, caller: string): AsyncGenerator<UpstreamTransaction>;
  /** Stops every poller and ends every watch (graceful shutdown). */
  close(): Promise<void>;
}

const UNKNOWN = 'The payment service does not know this transaction.';
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
 * subscribers cost one upstream call), then the poller's events.
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
   * Starts delivering the txRef's events to `listener` (and makes sure someone polls it);
   * resolves, once listening, to the function that stops.
   */
  protected abstract join(txRef: string, listener: LiveListener): Promise<() => void>;

  async *watch(
    txRef: string,
    signal: AbortSignal,
    caller: string,
  ): AsyncGenerator<UpstreamTransaction> {
    if (this.closed) throw new GatewayError('UPSTREAM_UNAVAILABLE', SHUTTING_DOWN);
    const max = this.deps.settings.maxPerCaller;
    const release = await this.#slots.take(caller, max);
    if (!release) {
      throw new GatewayError(
        'RATE_LIMITED',
        `This caller already follows ${max} transactions; end one before starting another.`,
      );
    }
    try {
      yield* this.#follow(txRef, signal);
    } finally {
      release();
    }
  }

  async *#follow(txRef: string, signal: AbortSignal): AsyncGenerator<UpstreamTransaction> {
    const { sources, settings, observer } = this.deps;
    const deadline = Date.now() + settings.maxWatchMs;
    let record = await sources.transaction(txRef);
    if (record === null) throw new BadUserInputError(UNKNOWN);
    if (isFinalStatus(record.status)) {
      yield record;
      return;
    }
    const inbox = new Inbox();
    this.#inboxes.add(inbox);
    observer?.subscribers(1);
    // The poller this may start serves every subscriber of txRef, not this request alone.
    const leave = await outsideRequests(() => this.join(txRef, inbox.push));
    try {
      // Read again now that events are coming: a change published between the first read and
      // joining is in the cache (pollers write it before they publish).
      record = (await sources.transaction(txRef).catch(() => record)) ?? record;
      let status = record.status;
      yield record;
      while (!isFinalStatus(status)) {
        const event = await inbox.next(signal, deadline);
        if (event === 'aborted') return;
        if (event === 'timeout') throw new GatewayError('UPSTREAM_TIMEOUT', WATCH_TIME_OVER);
        if (event.type === 'error') throw new GatewayError(event.code, event.message);
        const next = event.record.status;
        if (next !== status) {
          status = next;
          yield event.record;
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

  abstract close(): Promise<void>;
}

export interface PollOptions {
  txRef: string;
  /** When this txRef's poll sequence began (epoch ms): after a minute, the interval grows. */
  startedAt: number;
  /** Wait before the first poll (ms): 0 when taking over, one interval after a first read. */
  firstDelayMs: number;
  signal: AbortSignal;
  publish: (event: LiveEvent) => void;
}

/**
 * Polls the payment interface (bypassing the cache, and writing it) until a final status, an
 * unknown reference, an unexpected error, or `signal`. Publishes each record whose status
 * differs from the previous poll's, and errors that end the watch. Every `pollMs` during the
 * sequence's first minute, then doubling up to `maxPollMs`. A passing upstream failure does not
 * end the watch.
 */
export async function runPoller(deps: LiveDeps, options: PollOptions): Promise<void> {
  const { sources, settings, observer } = deps;
  const { txRef, signal, publish } = options;
  let delay = options.firstDelayMs;
  let last: string | undefined;
  for (;;) {
    try {
      await sleep(delay, undefined, { signal });
    } catch {
      return;
    }
    let record: UpstreamTransaction | null | undefined;
    try {
      record = await sources.transaction(txRef, { bypassCache: true });
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
      publish({ type: 'error', code: 'BAD_USER_INPUT', message: UNKNOWN });
      return;
    }
    if (record) {
      const status = record.status;
      if (status !== last) {
        last = status;
        publish({ type: 'record', record });
      }
      if (isFinalStatus(status)) return;
    }
    delay =
      Date.now() - options.startedAt > 60_000
        ? Math.min(Math.max(delay, settings.pollMs) * 2, settings.maxPollMs)
        : settings.pollMs;
  }
}
