/**
 * Small response helpers shared by the two simulated interfaces.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a simulated interface does with one request whose body has been read. */
export type SandboxHandler = {
  /** Answers (or deliberately does not answer) one request; `body` is its whole body. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL, body: string): void;
  /** Cancels delayed answers, so that closing the sandbox leaves no timer behind. */
  close(): void;
};

/** Sends a JSON body with an exact Content-Length (so keep-alive clients can reuse the socket). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body), headers);
}

/** Sends a text body of the given content type. */
export function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) {
    return;
  }
  res.writeHead(status, {
    ...headers,
    'content-type': contentType,
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
  });
  res.end(body);
}

/**
 * Closes the connection without an answer. A TCP reset rather than a FIN, so
 * that the client sees what a crashed upstream or a proxy in the way produces.
 */
export function resetConnection(req: IncomingMessage): void {
  const socket = req.socket;
  if (typeof socket.resetAndDestroy === 'function') {
    socket.resetAndDestroy();
  } else {
    socket.destroy();
  }
}

/**
 * Timers of delayed answers. A timer is dropped when its client goes away,
 * and all of them when the sandbox closes.
 */
export class DelayedAnswers {
  readonly #timers = new Set<NodeJS.Timeout>();

  /** Runs `answer` after `ms`, unless the response is closed first. */
  after(res: ServerResponse, ms: number, answer: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!res.destroyed && !res.writableEnded) {
        answer();
      }
    }, ms);
    this.#timers.add(timer);
    res.once('close', () => {
      clearTimeout(timer);
      this.#timers.delete(timer);
    });
  }

  /** Cancels every pending answer. */
  clear(): void {
    for (const timer of this.#timers) {
      clearTimeout(timer);
    }
    this.#timers.clear();
  }
}

/**
 * Compares a presented credential with the expected one in constant time.
 * Hashing first makes both sides the same length, so the length is not leaked either.
 */
export function credentialMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) {
    return false;
  }
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * The item whose credential the presented one is, or `undefined`. Every item is compared
 * (in constant time), so the answer's timing does not tell which item matched or how many
 * there are before it.
 */
export function findByCredential<T>(
  presented: string | undefined,
  items: readonly T[],
  credentialOf: (item: T) => string,
): T | undefined {
  let found: T | undefined;
  for (const item of items) {
    if (credentialMatches(presented, credentialOf(item)) && found === undefined) {
      found = item;
    }
  }
  return found;
}

/** Request headers as one string per (lower-case) name; repeated headers are joined by `, `. */
export function flatHeaders(req: IncomingMessage): Record<string, string> {
  // fromEntries defines own properties, so a header named __proto__ stays data.
  return Object.fromEntries(
    Object.entries(req.headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]],
    ),
  );
}
