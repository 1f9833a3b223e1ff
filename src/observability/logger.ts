/**
 * Structured JSON logs (pino) with redaction. Two layers: every value under a sensitive key is
 * replaced at any depth (credentials and the personal data of upstream records), and pino's
 * path redaction covers extra paths given by configuration (`LOG_REDACT_PATHS`). A line written
 * while a request is served carries its `requestId`.
 */
import { type DestinationStream, type Logger, pino } from 'pino';
import type { LogConfig } from '../config.ts';
import { currentRequestId } from './request-context.ts';

export const CENSOR = '[redacted]';

/**
 * Keys whose values never reach a log line, at any depth (compared case-insensitively):
 * credentials, then the personal data of payment and KYC records (names, contact details,
 * card digits, the values submitted for checks) and the caller's identity.
 */
export const REDACTED_KEYS: ReadonlySet<string> = new Set(
  [
    'authorization',
    'x-secret-key',
    'cookie',
    'set-cookie',
    'token',
    'accesstoken',
    'secret',
    'secretkey',
    'jwtsecret',
    'password',
    'variables',
    'customer',
    'fullname',
    'name',
    'email',
    'phone',
    'card',
    'first',
    'last',
    'pan',
    'query',
    'result',
    'userref',
    'sub',
    'bvn',
    'nin',
  ].map((key) => key.toLowerCase()),
);

/** Whether values under `key` are redacted; remembered per key name (a log has few). */
const verdicts = new Map<string, boolean>();
function sensitive(key: string): boolean {
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    verdict = REDACTED_KEYS.has(key.toLowerCase());
    if (verdicts.size < 10_000) verdicts.set(key, verdict);
  }
  return verdict;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * `value` with every value under a sensitive key replaced, at any depth. Plain objects and arrays
 * with nothing to redact are returned as they are (most log lines: no copy); any other object is
 * copied to its own enumerable properties, as it always was.
 */
function redactDeep(value: unknown, depth: number): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const redacted = redactDeep(item, depth + 1);
      if (redacted !== item) {
        copy ??= [...value];
        copy[index] = redacted;
      }
    });
    return copy ?? value;
  }
  const plain = isPlain(value);
  let copy: Record<string, unknown> | undefined = plain ? undefined : {};
  for (const [key, inner] of Object.entries(value)) {
    const redacted = sensitive(key) ? CENSOR : redactDeep(inner, depth + 1);
    if (copy) copy[key] = redacted;
    else if (redacted !== inner) {
      copy = { ...(value as Record<string, unknown>), [key]: redacted };
    }
  }
  return copy ?? value;
}

export type { Logger };

/** pino's number for `warn`: lines at this level or above are written at once. */
const WARN = 40;

/**
 * pino's `time` field as an ISO 8601 instant, the text made once per millisecond: under load
 * many lines share one, and `toISOString` per line showed in profiles.
 */
function isoTimeOncePerMillisecond(): () => string {
  let last = -1;
  let text = '';
  return () => {
    const now = Date.now();
    if (now !== last) {
      last = now;
      text = `,"time":"${new Date(now).toISOString()}"`;
    }
    return text;
  };
}

/** Builds the gateway's logger; `destination` lets tests capture the lines. */
export function createLogger(config: LogConfig, destination?: DestinationStream): Logger {
  // stdout through an asynchronous writer that gathers lines into writes of 4 KB, or whatever
  // a quarter of a second brought: one write per request line was 5 % of the CPU under load.
  // Warnings and errors are flushed at once; pino flushes on exit, and `logger.flush()` runs at
  // shutdown, so no line is lost.
  const stream =
    destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 });
  const writer = stream as DestinationStream & { flush?: () => void };
  const flush = typeof writer.flush === 'function' ? () => writer.flush?.() : undefined;
  const options = {
    level: config.level,
    base: { service: 'payment-kyc-gateway' },
    timestamp: isoTimeOncePerMillisecond(),
    // The id of the request a line is written for (upstream failures, cache warnings…); a line's
    // own `requestId` wins.
    mixin: () => {
      const requestId = currentRequestId();
      return requestId === undefined ? {} : { requestId };
    },
    ...(config.redactPaths.length > 0 && {
      redact: { paths: config.redactPaths, censor: CENSOR },
    }),
    formatters: {
      level: (label: string) => ({ level: label }),
      log: (object: Record<string, unknown>) => redactDeep(object, 0) as Record<string, unknown>,
    },
    ...(flush && {
      hooks: {
        logMethod(
          this: Logger,
          args: Parameters<Logger['info']>,
          method: Logger['info'],
          level: number,
        ) {
          method.apply(this, args);
          if (level >= WARN) flush();
        },
      },
    }),
  };
  return pino(options, stream);
}
