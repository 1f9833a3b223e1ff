/**
 * Structured JSON logs (pino) with redaction. Two layers: every value under a sensitive key is
 * replaced at any depth (credentials and the personal data of upstream records), and pino's
 * path redaction covers extra paths given by configuration (`LOG_REDACT_PATHS`). A line written
 * while a request is served carries its `requestId`.
 */
import { writeSync } from 'node:fs';
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
  // Own enumerable keys, as Object.entries gives them, without its array of pairs per object.
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const inner = record[key];
    const redacted = sensitive(key) ? CENSOR : redactDeep(inner, depth + 1);
    if (copy) copy[key] = redacted;
    else if (redacted !== inner) copy = { ...record, [key]: redacted };
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

/** The asynchronous writer pino.destination builds (SonicBoom), as far as it is used here. */
interface Destination extends DestinationStream {
  flush(callback?: (error?: Error) => void): void;
  flushSync(): void;
  destroyed?: boolean;
}

/** Characters of log lines gathered before they go to the writer as one string. */
const BATCH_CHARS = 16 * 1024;
/** Longest a line waits in a batch (ms). */
const BATCH_MS = 250;

/** The batches of stdout loggers, written out when the process exits. */
const openBatches = new Set<WeakRef<LineBatch>>();
let exitHooked = false;

/**
 * Log lines gathered into one string of about 16 KB (or whatever a quarter of a second
 * brought) before they reach pino's asynchronous writer. SonicBoom measures the text it holds
 * each time a line is added (`Buffer.byteLength` of the growing string), which flattens it: with
 * a line per request that was 5–6 µs of CPU per line, more than building the line. Handed whole
 * batches, it does that once per batch. Nothing is lost: `flush` (warnings, errors, shutdown)
 * and the process's exit pass the batch on first.
 */
class LineBatch implements DestinationStream {
  readonly #target: Destination;
  /** The file descriptor the writer writes to. */
  readonly #fd: number;
  #parts: string[] = [];
  #chars = 0;

  constructor(target: Destination, fd: number) {
    this.#target = target;
    this.#fd = fd;
    const self = new WeakRef(this);
    openBatches.add(self);
    const timer = setInterval(() => {
      const batch = self.deref();
      if (batch) batch.#pass();
      else {
        clearInterval(timer);
        openBatches.delete(self);
      }
    }, BATCH_MS);
    timer.unref();
    if (!exitHooked) {
      exitHooked = true;
      process.once('exit', () => {
        for (const ref of openBatches) ref.deref()?.flushSync();
      });
    }
  }

  write(line: string): void {
    this.#parts.push(line);
    this.#chars += line.length;
    if (this.#chars >= BATCH_CHARS) this.#pass();
  }

  /** The lines gathered so far, as one string ('' when none), and an empty batch. */
  #take(): string {
    const text = this.#parts.length === 1 ? (this.#parts[0] ?? '') : this.#parts.join('');
    this.#parts = [];
    this.#chars = 0;
    return text;
  }

  /** Hands the batch to the writer. */
  #pass(): void {
    if (this.#parts.length === 0 || this.#target.destroyed) return;
    this.#target.write(this.#take());
  }

  /** Passes the batch on; `callback` once the writer has written everything (drained). */
  flush(callback?: (error?: Error) => void): void {
    this.#pass();
    this.#target.flush(callback);
  }

  /**
   * At exit: what the writer holds, then the batch, written synchronously (handed to the
   * asynchronous writer, it would start a write the exiting process never finishes).
   */
  flushSync(): void {
    const text = this.#take();
    if (this.#target.destroyed) return;
    try {
      this.#target.flushSync();
      if (text !== '') writeSync(this.#fd, text);
    } catch {
      // The writer is closed or stdout is gone: nothing more can be written.
    }
  }
}

/** The fields every line starts with after its level and time. */
const BASE = { service: 'payment-kyc-gateway' };

/** Where a logger built here writes, for {@link writeRequestLine}. */
interface LineTarget {
  stream: DestinationStream;
  time: () => string;
  /** `,"service":…`, as pino writes the base fields. */
  base: string;
}
const lineTargets = new WeakMap<Logger, LineTarget>();

/** The fields of the line written once per operation answered (`graphql request`). */
export interface RequestLine {
  requestId: string;
  /** The request's business, when several are served (an id of the businesses file). */
  business: string | undefined;
  transport: 'http' | 'websocket';
  operation: string;
  operationType: string | undefined;
  status: number;
  durationMs: number;
  errorCodes: readonly string[];
  traceId: string | undefined;
  spanId: string | undefined;
}

const finite = (value: number): string => (Number.isFinite(value) ? String(value) : 'null');

/**
 * Writes the request line, by far the most frequent: the same JSON line pino writes for these
 * fields (`{"level":"info","time":…,"service":…, the fields in this order, "msg":"graphql
 * request"}`, fields left undefined out), built as text. pino's object walk and the redaction
 * walk cost three times as much, and there is nothing to redact here: no key below is a
 * sensitive one, and the values are numbers and short strings of the gateway's own. A logger
 * with redaction paths of its own (`LOG_REDACT_PATHS`), or one not built by createLogger,
 * writes the line through pino instead.
 */
export function writeRequestLine(logger: Logger, line: RequestLine): void {
  if (!logger.isLevelEnabled('info')) return;
  const target = lineTargets.get(logger);
  if (!target) {
    logger.info({ ...line }, 'graphql request');
    return;
  }
  let text = `{"level":"info"${target.time()}${target.base},"requestId":${JSON.stringify(line.requestId)}`;
  if (line.business !== undefined) text += `,"business":${JSON.stringify(line.business)}`;
  text += `,"transport":${JSON.stringify(line.transport)},"operation":${JSON.stringify(line.operation)}`;
  if (line.operationType !== undefined) {
    text += `,"operationType":${JSON.stringify(line.operationType)}`;
  }
  text += `,"status":${finite(line.status)},"durationMs":${finite(line.durationMs)},"errorCodes":${JSON.stringify(line.errorCodes)}`;
  if (line.traceId !== undefined) text += `,"traceId":${JSON.stringify(line.traceId)}`;
  if (line.spanId !== undefined) text += `,"spanId":${JSON.stringify(line.spanId)}`;
  target.stream.write(`${text},"msg":"graphql request"}\n`);
}

/** What the mixin adds to a line that needs nothing added (the line is then not copied). */
const NO_FIELDS: Record<string, unknown> = Object.freeze({});

/** Builds the gateway's logger; `destination` lets tests capture the lines. */
export function createLogger(config: LogConfig, destination?: DestinationStream): Logger {
  // stdout through pino's asynchronous writer, fed whole batches of lines (see LineBatch):
  // one write per request line was 5 % of the CPU under load. Warnings and errors are flushed
  // at once; the batch is written out on exit, and `logger.flush()` runs at shutdown, so no
  // line is lost.
  const stream =
    destination ??
    // minLength 1: each batch is written at once, and flush(callback) waits for the write.
    new LineBatch(pino.destination({ dest: 1, sync: false, minLength: 1 }) as Destination, 1);
  const writer = stream as DestinationStream & { flush?: () => void };
  const flush = typeof writer.flush === 'function' ? () => writer.flush?.() : undefined;
  const time = isoTimeOncePerMillisecond();
  const options = {
    level: config.level,
    base: BASE,
    timestamp: time,
    // The id of the request a line is written for (upstream failures, cache warnings…); a line's
    // own `requestId` wins (and then the request's is not looked up, nor the line copied).
    mixin: (line: object) => {
      if ((line as { requestId?: unknown }).requestId !== undefined) return NO_FIELDS;
      const requestId = currentRequestId();
      return requestId === undefined ? NO_FIELDS : { requestId };
    },
    mixinMergeStrategy: (line: object, mixed: object) =>
      mixed === NO_FIELDS ? line : Object.assign(mixed, line),
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
  const logger = pino(options, stream);
  if (config.redactPaths.length === 0) {
    const base = Object.entries(BASE)
      .map(([key, value]) => `,${JSON.stringify(key)}:${JSON.stringify(value)}`)
      .join('');
    lineTargets.set(logger, { stream, time, base });
  }
  return logger;
}
