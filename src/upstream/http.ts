/**
 * The HTTP layer shared by both upstream clients: a keep-alive connection pool per upstream,
 * one time budget per read (retries included), retries of GETs on connection errors, 429, 502,
 * 503 and 504 with jittered exponential backoff, a circuit breaker (cockatiel) and a cap on
 * concurrent calls (slots.ts).
 *
 * The retries are written here rather than with cockatiel's retry policy because two rules
 * depend on the remaining budget: a `Retry-After` that does not fit ends the read at once with
 * its value, and a backoff that does not fit returns the last answer instead of sleeping into a
 * timeout. cockatiel supplies the backoff and the breaker. The cap is the queue the callers'
 * shares use too, rather than cockatiel's bulkhead: that one keeps its queue's order only as long
 * as no call arrives in the microtask between a slot's release and its hand-over, and its
 * asynchronous steps around every call cost more than the cap's own counter.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BrokenCircuitError,
  type CircuitBreakerPolicy,
  CircuitState,
  circuitBreaker,
  ExponentialBackoff,
  handleAll,
  type IBackoff,
  SamplingBreaker,
} from 'cockatiel';
import { type Dispatcher, Pool } from 'undici';
import type { UpstreamPolicyConfig } from '../config.ts';
import {
  UpstreamBadResponseError,
  type UpstreamName,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../errors.ts';
import { currentRequestId } from '../observability/request-context.ts';
import {
  injectTrace,
  type Tracing,
  type UpstreamSpan,
  type UpstreamTarget,
  upstreamSpan,
  upstreamTarget,
} from '../observability/tracing.ts';
import { Deadlines, Timed } from './deadlines.ts';
import { CALL_DROPPED, Slots } from './slots.ts';

/** The final answer of one upstream read. */
export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** How many HTTP calls the read took. */
  attempts: number;
}

/** What one HTTP attempt ended with (never carries a URL or body). */
export type AttemptOutcome = 'ok' | 'http_error' | 'retryable' | 'connection_error' | 'timeout';

export type BreakerState = 'closed' | 'open' | 'half_open';

/** Receives what the HTTP layer does, for metrics and logs. */
export interface UpstreamObserver {
  attempt?(event: {
    upstream: UpstreamName;
    outcome: AttemptOutcome;
    status?: number;
    durationMs: number;
  }): void;
  retry?(event: { upstream: UpstreamName; delayMs: number; after: AttemptOutcome }): void;
  rejected?(event: { upstream: UpstreamName; reason: 'circuit_open' | 'concurrency' }): void;
  breaker?(event: { upstream: UpstreamName; state: BreakerState }): void;
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
/** Upstream bodies beyond this are refused rather than buffered. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface UpstreamHttpOptions {
  name: UpstreamName;
  /** Base address, possibly with a path prefix, without a trailing slash. */
  baseUrl: string;
  policy: UpstreamPolicyConfig;
  observer?: UpstreamObserver;
  /** A span per call, `traceparent` on the request (when tracing is on). */
  tracing?: Tracing;
}

/** Seconds of a `Retry-After` header (delta-seconds or HTTP-date), or undefined. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now = Date.now(),
): number | undefined {
  const header = Array.isArray(value) ? value[0] : value;
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Thrown inside the breaker for an answer that counts as a failure of the upstream. */
class FailedAnswer extends Error {
  readonly result: HttpResult;
  constructor(result: HttpResult) {
    super(`HTTP ${result.status}`);
    this.result = result;
  }
}

/**
 * Whether any request still waits for something (a read, an operation, a client's answer), in
 * the two forms a wait asks for: a look at the moment, and a signal for a wait that sleeps. Given
 * only to reads some request may leave.
 */
export interface Waiting {
  /**
   * True once no request waits any more, asked at the moment: no listener on the requests, so
   * a call waiting in a queue costs nothing until its turn comes.
   */
  gone: () => boolean;
  /** Aborts once no request waits any more (it listens to the requests: made on first ask). */
  abandoned: () => AbortSignal;
}

/**
 * One read through {@link UpstreamHttp.get}: the same for each of its attempts but
 * `closedCount`, which is the current attempt's.
 */
interface Read<T> {
  path: string;
  headers: Record<string, string>;
  /** See {@link UpstreamHttp.get}. */
  waiting: Waiting | undefined;
  /** What its failures are counted under (the breaker counts a key once per window). */
  key: string;
  /** When its time budget runs out (`performance.now()` ms). */
  deadline: number;
  /** What the read returns for its final answer (see {@link UpstreamHttp.get}). */
  accept: (result: HttpResult) => T | PromiseLike<T>;
  /**
   * The current attempt was made with the circuit closed and is counted: its outcome goes into
   * the breaker's window when it ends (see {@link UpstreamHttp} `#guarded`).
   */
  closedCount: boolean;
  /**
   * The current attempt took its slot of the cap at once: given back when the attempt settles,
   * in the step that reads its outcome (see {@link UpstreamHttp} `#attempt`).
   */
  holding: boolean;
}

/** What an attempt that did not succeed leaves for the retry after it. */
type Outcome = { kind: 'final' | 'retryable'; result: HttpResult } | { kind: 'connection' };

/** The headers of a call that has no answer yet (never changed). */
const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});

/** The call's time budget ran out (the read then ends with UPSTREAM_TIMEOUT). */
class CallTimedOut extends Error {
  override readonly name = 'TimeoutError';
}

/** The read's time budget ran out while its call waited for a slot of the upstream's cap. */
class SlotTimedOut extends Error {}

/** The queue of calls waiting for a slot of the upstream's cap is full. */
class CapQueueFull extends Error {}

/**
 * One HTTP call's handler: gathers the answer's chunks and settles the call's promise once, with
 * the answer, an error, or the end of its time budget (which aborts the call as soon as it has a
 * connection; the budget is kept in the upstream's {@link Deadlines}). One object per call, its
 * steps on the prototype.
 */
class Call extends Timed implements Dispatcher.DispatchHandler {
  readonly #resolve: (answer: HttpResult) => void;
  readonly #reject: (error: Error) => void;
  readonly #traced: UpstreamSpan;
  readonly #attempt: number;
  #settled = false;
  #controller: Dispatcher.DispatchController | undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = NO_HEADERS;
  /** The answer's first chunk, and the others when there are more (most answers are one). */
  #first: Buffer | undefined;
  #more: Buffer[] | undefined;
  /** Where its budget is kept (it is listed there by the one who makes the call). */
  readonly #deadlines: Deadlines;

  constructor(
    resolve: (answer: HttpResult) => void,
    reject: (error: Error) => void,
    traced: UpstreamSpan,
    attempt: number,
    deadlines: Deadlines,
  ) {
    super();
    this.#resolve = resolve;
    this.#reject = reject;
    this.#traced = traced;
    this.#attempt = attempt;
    this.#deadlines = deadlines;
  }

  settle(error: Error | undefined, answer?: HttpResult): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#deadlines.remove(this);
    this.#traced.done(answer?.status, error && failureType(error));
    // An answer that counts as a failure of the upstream (inside the breaker).
    if (answer && (answer.status >= 500 || answer.status === 429)) {
      this.#reject(new FailedAnswer(answer));
    } else if (answer) this.#resolve(answer);
    else if (error) this.#reject(error);
  }

  /** The time budget ran out. */
  override timedOut(): void {
    const error = new CallTimedOut();
    this.#controller?.abort(error);
    this.settle(error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#settled) controller.abort(new CallTimedOut());
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    // 1xx answers are interim: the final one follows.
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#first === undefined) this.#first = chunk;
    else if (this.#more === undefined) this.#more = [this.#first, chunk];
    else this.#more.push(chunk);
  }

  onResponseEnd(): void {
    const body = this.#more
      ? Buffer.concat(this.#more).toString('utf8')
      : (this.#first?.toString('utf8') ?? '');
    this.settle(undefined, {
      status: this.#status,
      headers: this.#headers,
      body,
      attempts: this.#attempt,
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.settle(error);
  }
}

const BREAKER_STATE: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Isolated]: 'open',
};

/** A pooled, retrying, circuit-broken HTTP client for one upstream. */
export class UpstreamHttp {
  readonly name: UpstreamName;
  readonly #pool: Pool;
  /** The budgets of the calls in flight, on one timer. */
  readonly #deadlines = new Deadlines();
  readonly #prefix: string;
  readonly #policy: UpstreamPolicyConfig;
  readonly #observer: UpstreamObserver;
  readonly #tracing: Tracing | undefined;
  /** What this upstream's CLIENT spans say of it. */
  readonly #target: UpstreamTarget;
  readonly #breaker: CircuitBreakerPolicy;
  /** The breaker's failure-rate window (what the policy consults and counts into). */
  readonly #sampling: SamplingBreaker;
  /** The cap on concurrent calls, and the queue of those waiting for a slot. */
  readonly #slots: Slots;
  readonly #backoff: ExponentialBackoff<unknown>;
  /**
   * Records (keys) that failed within the breaker's window, until when: a record that fails on
   * its own, asked again and again, counts once toward the breaker, so it cannot open the circuit
   * for every other record; failures spread over several records (the service is down) do.
   */
  readonly #failedKeys = new Map<string, number>();

  constructor(options: UpstreamHttpOptions) {
    const base = new URL(options.baseUrl);
    this.name = options.name;
    this.#prefix = base.pathname.replace(/\/+$/, '');
    this.#policy = options.policy;
    this.#observer = options.observer ?? {};
    this.#tracing = options.tracing;
    this.#target = upstreamTarget(options.name, options.baseUrl);
    this.#pool = new Pool(base.origin, {
      connections: options.policy.maxConnections,
      keepAliveTimeout: 30_000,
      maxResponseSize: MAX_BODY_BYTES,
    });
    // Opens on the failure rate over a window with a minimum of calls, not on a run of failures
    // (which one broken record asked five times would make).
    this.#sampling = new SamplingBreaker({
      threshold: options.policy.breakerFailureRate,
      duration: options.policy.breakerWindowMs,
      minimumRps: options.policy.breakerMinCalls / (options.policy.breakerWindowMs / 1000),
    });
    this.#breaker = circuitBreaker(handleAll, {
      halfOpenAfter: options.policy.breakerHalfOpenMs,
      breaker: this.#sampling,
    });
    this.#breaker.onStateChange((state) =>
      this.#observer.breaker?.({ upstream: this.name, state: BREAKER_STATE[state] }),
    );
    this.#slots = new Slots(options.policy.maxConcurrent, options.policy.maxQueued);
    this.#backoff = new ExponentialBackoff({
      initialDelay: options.policy.retryBaseDelayMs,
      maxDelay: options.policy.timeoutMs,
    });
  }

  /** The circuit's state, for readiness. */
  get breakerState(): BreakerState {
    return BREAKER_STATE[this.#breaker.state];
  }

  /**
   * GETs `path` (relative to the base address) within the time budget. Resolves with the last
   * answer when it is final or retries are spent; rejects with UPSTREAM_TIMEOUT when the budget
   * runs out, and with UPSTREAM_UNAVAILABLE on connection errors, an open circuit, a full queue
   * or a Retry-After beyond the budget.
   *
   * `waiting` says whether any request still waits for the read. It is asked only when a call
   * has to wait in the cap's queue (`gone`, looked at when its turn comes or its place in a full
   * queue is wanted) or for a retry (`abandoned`, for the sleep): once none waits, the call
   * leaves that queue, or the retry is not made, and the read rejects with the reason of
   * `abandoned`. A call in flight runs to its end.
   *
   * `accept` turns the final answer into what the read returns (the client's reading of it):
   * applied in the same step that ends the call, not in a step of its own; what it throws is
   * the read's rejection (never a retry).
   *
   * `since` (`performance.now()`, default now): when the read's time budget began, earlier when
   * the read first waited elsewhere (in its caller's queue); one that begins with nothing left
   * ends with UPSTREAM_TIMEOUT, no call made.
   */
  get<T>(
    path: string,
    headers: Record<string, string>,
    accept: (result: HttpResult) => T | PromiseLike<T>,
    waiting?: Waiting,
    key = path,
    since = performance.now(),
  ): Promise<T> {
    const read: Read<T> = {
      path,
      headers,
      waiting,
      key,
      deadline: since + this.#policy.timeoutMs,
      accept,
      closedCount: false,
      holding: false,
    };
    return this.#attempt(read, 1, undefined);
  }

  /**
   * Attempt number `attempt`, within what is left of the budget: its answer, or (it did not end
   * the call) what the retry after it returns. A `then` rather than an async function: most
   * calls end with their first attempt, and a suspended frame per call showed in allocation
   * profiles.
   */
  #attempt<T>(read: Read<T>, attempt: number, backoff: IBackoff<unknown> | undefined): Promise<T> {
    const { key, deadline } = read;
    const started = performance.now();
    if (deadline - started <= 0) {
      // A first attempt begins with nothing left only after a wait in its caller's queue: a
      // refusal for concurrency, as one whose turn at the cap comes too late.
      return Promise.reject(
        attempt === 1
          ? this.#waitedTooLong()
          : new UpstreamTimeoutError(this.name, this.#policy.timeoutMs),
      );
    }
    read.closedCount = false;
    read.holding = false;
    let call: Promise<HttpResult>;
    try {
      call = this.#guarded(read, attempt);
    } catch (error) {
      call = Promise.reject(error);
    }
    return call.then(
      (result) => {
        if (read.holding) this.#slots.release();
        if (read.closedCount) this.#sampling.success(CircuitState.Closed);
        return read.accept(this.#succeeded(result, key, started));
      },
      (error: unknown) => {
        if (read.holding) this.#slots.release();
        if (read.closedCount) this.#countFailure(error);
        return this.#retry(
          read,
          attempt,
          backoff,
          this.#failedAttempt(error, key, started, deadline, read.waiting),
        );
      },
    );
  }

  /** An attempt that ended with an answer to return (reported, and its key's failure forgotten). */
  #succeeded(result: HttpResult, key: string, started: number): HttpResult {
    this.#failedKeys.delete(key);
    this.#observer.attempt?.({
      upstream: this.name,
      outcome: result.status < 400 || result.status === 404 ? 'ok' : 'http_error',
      status: result.status,
      durationMs: performance.now() - started,
    });
    return result;
  }

  /**
   * After attempt `attempt` of `read` ended with `outcome`: returns its answer when final, else waits
   * (backoff or `Retry-After`) and makes the next attempt while attempts and the budget last.
   */
  async #retry<T>(
    read: Read<T>,
    attempt: number,
    previous: IBackoff<unknown> | undefined,
    outcome: Outcome,
  ): Promise<T> {
    if (outcome.kind === 'final') return read.accept(outcome.result);
    const result = outcome.kind === 'retryable' ? outcome.result : undefined;
    const left = read.deadline - performance.now();
    const retryAfter = result ? parseRetryAfter(result.headers['retry-after']) : undefined;
    if (result?.status === 429 && retryAfter !== undefined && retryAfter * 1000 > left) {
      // Waiting would break the caller's budget: say when to come back instead.
      throw new UpstreamUnavailableError(this.name, 'rate limited by the upstream', retryAfter);
    }
    const giveUp = (): T | PromiseLike<T> => {
      if (result) return read.accept(result);
      throw new UpstreamUnavailableError(this.name, 'connection failed');
    };
    if (attempt >= this.#policy.maxAttempts) return giveUp();
    const backoff = previous ? previous.next(undefined) : this.#backoff.next();
    const delay = retryAfter !== undefined ? retryAfter * 1000 : (backoff?.duration ?? 0);
    if (delay >= left) return giveUp();
    // A retry is a call not yet made: none once no request waits for the read any more.
    const waiting = read.waiting?.abandoned();
    if (waiting?.aborted) throw waiting.reason;
    this.#observer.retry?.({
      upstream: this.name,
      delayMs: delay,
      after: result ? 'retryable' : 'connection_error',
    });
    await sleep(delay);
    if (waiting?.aborted) throw waiting.reason;
    return this.#attempt(read, attempt + 1, backoff);
  }

  /**
   * One call of `read` through the upstream's cap (its {@link Slots}) and the breaker. A call
   * that has to wait for a slot is dropped when its turn comes, or when its place in a full
   * queue is wanted, once `read.waiting` says no request waits for it any more (asked at that
   * moment: no listener per waiting call).
   *
   * With the circuit closed the call is made as it is, and `read.closedCount` says that its
   * outcome is to be counted as the breaker's policy counts it when it ends (a success into the
   * failure-rate window, a failure through the policy itself, which opens the circuit when the
   * rate is reached; see {@link #attempt}): without the policy's three async steps around every
   * call. A circuit that is not closed goes through the policy (refused while open, the trial
   * call while half-open).
   *
   * The read's time budget covers the wait for a slot: a call whose turn comes after its budget
   * has run out is not made (UPSTREAM_TIMEOUT), and one whose turn comes before has only what is
   * left of it. No timer per waiting call (with one, a request whose twenty calls waited here
   * took about 2 % more CPU): a slot frees as soon as a call in flight ends, each within its own
   * budget, and the call whose turn comes late is refused then.
   */
  #guarded<T>(read: Read<T>, attempt: number): Promise<HttpResult> {
    const { path, headers, deadline } = read;
    /** `left`: what is left of the budget, when the caller has just read the clock. */
    const call = (left = deadline - performance.now()) => this.#once(path, headers, left, attempt);
    if (this.#policy.benchNoBreakerOrBulkhead) return call();
    const counted = !this.#failedRecently(read.key);
    const guarded = () => {
      const left = deadline - performance.now();
      // Its turn came after its budget ran out (it waited for a slot): not made.
      if (left <= 0) throw new SlotTimedOut();
      if (this.#breaker.state === CircuitState.Closed) {
        // Already counted in this window: not again.
        read.closedCount = counted;
        return call(left);
      }
      // Never past a circuit that is not closed.
      if (!counted) throw new BrokenCircuitError('the circuit is not closed');
      // The policy calls it later, with a context of its own: the budget read then.
      return this.#breaker.execute(() => call());
    };
    // A free slot is taken at once, and given back in the step that reads the attempt's outcome
    // (no reaction of its own per call). What `guarded` throws is that attempt's rejection.
    if (this.#slots.take()) {
      read.holding = true;
      return guarded();
    }
    // Whether the call is still wanted, asked only of one that has to wait.
    return this.#slots.run(guarded, read.waiting?.gone) ?? Promise.reject(new CapQueueFull());
  }

  /**
   * A read whose budget ran out while it waited in a queue (its caller's, or the cap's): no call
   * made, counted as refused for concurrency, UPSTREAM_TIMEOUT to the caller.
   */
  #waitedTooLong(): UpstreamTimeoutError {
    this.#observer.rejected?.({ upstream: this.name, reason: 'concurrency' });
    return new UpstreamTimeoutError(this.name, this.#policy.timeoutMs);
  }

  /**
   * A failure of a call made while the circuit was closed, counted through the policy (which
   * opens the circuit when the rate is reached). Opened meanwhile by other calls: already open,
   * it is not counted again.
   */
  #countFailure(error: unknown): void {
    if (this.#breaker.state !== CircuitState.Closed) return;
    this.#breaker.execute(() => Promise.reject(error)).catch(ignoreCounted);
  }

  /**
   * What a call that did not end with a final answer leaves: an answer to retry or to return
   * (5xx, 429), a connection error to retry, or a gateway error (thrown).
   */
  #failedAttempt(
    error: unknown,
    key: string,
    started: number,
    deadline: number,
    waiting: Waiting | undefined,
  ): Outcome {
    // Dropped from the queue (no request waits any more): not a failure of the upstream.
    if (error === CALL_DROPPED) throw waiting?.abandoned().reason ?? error;
    // Its budget ran out while it waited for a slot: no call was made.
    if (error instanceof SlotTimedOut) throw this.#waitedTooLong();
    if (error instanceof FailedAnswer) {
      this.#failed(key);
      const retryable = RETRYABLE_STATUS.has(error.result.status);
      this.#observer.attempt?.({
        upstream: this.name,
        outcome: retryable ? 'retryable' : 'http_error',
        status: error.result.status,
        durationMs: performance.now() - started,
      });
      return { kind: retryable ? 'retryable' : 'final', result: error.result };
    }
    if (error instanceof BrokenCircuitError) {
      this.#observer.rejected?.({ upstream: this.name, reason: 'circuit_open' });
      throw new UpstreamUnavailableError(this.name, 'circuit open after repeated failures');
    }
    if (error instanceof CapQueueFull) {
      this.#observer.rejected?.({ upstream: this.name, reason: 'concurrency' });
      throw new UpstreamUnavailableError(this.name, 'too many calls in flight');
    }
    if (hasCode(error, 'UND_ERR_RES_EXCEEDED_MAX_SIZE')) {
      throw new UpstreamBadResponseError(this.name, 'the answer is too large');
    }
    this.#failed(key);
    const timedOut = deadline - performance.now() <= 0 || isAbort(error);
    this.#observer.attempt?.({
      upstream: this.name,
      outcome: timedOut ? 'timeout' : 'connection_error',
      durationMs: performance.now() - started,
    });
    if (timedOut) throw new UpstreamTimeoutError(this.name, this.#policy.timeoutMs);
    return { kind: 'connection' };
  }

  /**
   * One HTTP call through the pool's dispatcher, with a handler that gathers the body's chunks:
   * no response stream, no AbortController and no promise per chunk (undici's `request()` builds
   * all three for every call, and they were a tenth of what an upstream call allocated). The
   * time budget covers the wait for a connection too: when it runs out the call rejects at once
   * and is aborted as soon as it has a connection.
   */
  #once(
    path: string,
    headers: Record<string, string>,
    remainingMs: number,
    attempt: number,
  ): Promise<HttpResult> {
    const fullPath = this.#prefix + path;
    // At least a millisecond: undici reads a timeout of 0 as none.
    const budgetMs = Math.max(1, remainingMs);
    const traced = upstreamSpan(this.#tracing, this.#target, fullPath, attempt);
    // The client's headers as they are, unless the request's id or a trace context is added to
    // a copy.
    const requestId = currentRequestId();
    let outgoing = headers;
    if (requestId !== undefined || traced.span) {
      outgoing = { ...headers };
      if (requestId !== undefined) outgoing['x-request-id'] = requestId;
      if (traced.span) injectTrace(traced.span, outgoing);
    }
    return new Promise<HttpResult>((resolve, reject) => {
      const call = new Call(resolve, reject, traced, attempt, this.#deadlines);
      this.#deadlines.add(call, budgetMs);
      try {
        this.#pool.dispatch(
          {
            method: 'GET',
            path: fullPath,
            headers: outgoing,
            headersTimeout: budgetMs,
            bodyTimeout: budgetMs,
          },
          call,
        );
      } catch (error) {
        call.settle(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  #failedRecently(key: string): boolean {
    const until = this.#failedKeys.get(key);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.#failedKeys.delete(key);
    return false;
  }

  #failed(key: string): void {
    // Bounded: at most the keys of one window; the oldest go first when it is full.
    if (this.#failedKeys.size >= 10_000) {
      const oldest = this.#failedKeys.keys().next().value;
      if (oldest !== undefined) this.#failedKeys.delete(oldest);
    }
    this.#failedKeys.delete(key);
    this.#failedKeys.set(key, Date.now() + this.#policy.breakerWindowMs);
  }

  /** Closes the pool's connections. */
  async close(): Promise<void> {
    await this.#pool.close();
  }
}

/** The failure a count through the policy rethrows: the read has its own copy of it. */
function ignoreCounted(): void {}

/** The conventions' `error.type` of a call that got no answer. */
function failureType(error: Error): string {
  if (isAbort(error)) return 'timeout';
  const { code } = error as { code?: unknown };
  return typeof code === 'string' ? code : error.name;
}

function hasCode(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}

function isAbort(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === 'AbortError' ||
      error.name === 'TimeoutError' ||
      hasCode(error, 'UND_ERR_HEADERS_TIMEOUT') ||
      hasCode(error, 'UND_ERR_BODY_TIMEOUT'))
  );
}
