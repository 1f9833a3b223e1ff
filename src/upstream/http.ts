/**
 * The HTTP layer shared by both upstream clients: a keep-alive connection pool per upstream,
 * one time budget per read (retries included), and retries of GETs on connection errors,
 * 429, 502, 503 and 504 with jittered exponential backoff (contract §4).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import type { UpstreamPolicyConfig } from '../config.ts';
import {
  UpstreamBadResponseError,
  type UpstreamName,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../errors.ts';

/** The final answer of one upstream read. */
export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** How many HTTP calls the read took. */
  attempts: number;
}

/** What one HTTP attempt ended with, for metrics and logs (never carries a URL or body). */
export type AttemptOutcome = 'ok' | 'http_error' | 'retryable' | 'connection_error' | 'timeout';

/** Receives one event per HTTP attempt. */
export type AttemptObserver = (event: {
  upstream: UpstreamName;
  outcome: AttemptOutcome;
  status?: number;
  durationMs: number;
}) => void;

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
/** Upstream bodies beyond this are refused rather than buffered. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface UpstreamHttpOptions {
  name: UpstreamName;
  /** Base address, possibly with a path prefix, without a trailing slash. */
  baseUrl: string;
  policy: UpstreamPolicyConfig;
  observe?: AttemptObserver;
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

/** A pooled, retrying HTTP client for one upstream. */
export class UpstreamHttp {
  readonly name: UpstreamName;
  readonly #pool: Pool;
  readonly #prefix: string;
  readonly #policy: UpstreamPolicyConfig;
  readonly #observe: AttemptObserver | undefined;

  constructor(options: UpstreamHttpOptions) {
    const base = new URL(options.baseUrl);
    this.name = options.name;
    this.#prefix = base.pathname.replace(/\/+$/, '');
    this.#policy = options.policy;
    this.#observe = options.observe;
    this.#pool = new Pool(base.origin, {
      connections: options.policy.maxConnections,
      keepAliveTimeout: 30_000,
      maxResponseSize: MAX_BODY_BYTES,
    });
  }

  /**
   * GETs `path` (relative to the base address) within the time budget. Resolves with the last
   * answer when it is final or retries are spent; rejects with UPSTREAM_TIMEOUT when the budget
   * runs out and with UPSTREAM_UNAVAILABLE on connection errors or a Retry-After beyond budget.
   */
  async get(path: string, headers: Record<string, string>): Promise<HttpResult> {
    const { timeoutMs, maxAttempts, retryBaseDelayMs } = this.#policy;
    const deadline = performance.now() + timeoutMs;
    let attempt = 0;
    for (;;) {
      attempt += 1;
      const remaining = deadline - performance.now();
      if (remaining <= 0) throw new UpstreamTimeoutError(this.name, timeoutMs);
      const started = performance.now();
      let result: HttpResult | undefined;
      try {
        result = await this.#once(path, headers, remaining, attempt);
      } catch (error) {
        if (hasCode(error, 'UND_ERR_RES_EXCEEDED_MAX_SIZE')) {
          throw new UpstreamBadResponseError(this.name, 'the answer is too large');
        }
        const timedOut = deadline - performance.now() <= 0 || isAbort(error);
        this.#observe?.({
          upstream: this.name,
          outcome: timedOut ? 'timeout' : 'connection_error',
          durationMs: performance.now() - started,
        });
        if (timedOut) throw new UpstreamTimeoutError(this.name, timeoutMs);
      }
      if (result) {
        const retryable = RETRYABLE_STATUS.has(result.status);
        this.#observe?.({
          upstream: this.name,
          outcome: retryable
            ? 'retryable'
            : result.status < 400 || result.status === 404
              ? 'ok'
              : 'http_error',
          status: result.status,
          durationMs: performance.now() - started,
        });
        if (!retryable) return result;
      }
      const retryAfter = result ? parseRetryAfter(result.headers['retry-after']) : undefined;
      const left = deadline - performance.now();
      if (result?.status === 429 && retryAfter !== undefined && retryAfter * 1000 > left) {
        // Waiting would break the caller's budget: say when to come back instead.
        throw new UpstreamUnavailableError(this.name, 'rate limited by the upstream', retryAfter);
      }
      if (attempt >= maxAttempts) {
        if (result) return result;
        throw new UpstreamUnavailableError(this.name, 'connection failed');
      }
      const backoff =
        retryAfter !== undefined
          ? retryAfter * 1000
          : retryBaseDelayMs * 2 ** (attempt - 1) * (0.5 + Math.random());
      if (backoff >= left) {
        if (result) return result;
        throw new UpstreamUnavailableError(this.name, 'connection failed');
      }
      await sleep(backoff);
    }
  }

  async #once(
    path: string,
    headers: Record<string, string>,
    remainingMs: number,
    attempt: number,
  ): Promise<HttpResult> {
    const signal = AbortSignal.timeout(Math.max(1, Math.ceil(remainingMs)));
    const response = await this.#pool.request({
      method: 'GET',
      path: this.#prefix + path,
      headers: { accept: 'application/json', ...headers },
      signal,
      headersTimeout: remainingMs,
      bodyTimeout: remainingMs,
    });
    const body = await response.body.text();
    return { status: response.statusCode, headers: response.headers, body, attempts: attempt };
  }

  /** Closes the pool's connections. */
  async close(): Promise<void> {
    await this.#pool.close();
  }
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
