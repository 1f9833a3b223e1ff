/**
 * The request a piece of work belongs to, carried across awaits (AsyncLocalStorage): its id goes
 * upstream in `x-request-id` and onto every log line written while the request is served.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const requests = new AsyncLocalStorage<string>();

/** Runs `serve` as the work of the request `id` (and everything it starts, awaits included). */
export function withRequestId<T>(id: string, serve: () => T): T {
  return requests.run(id, serve);
}

/** The id of the request being served here, if any. */
export function currentRequestId(): string | undefined {
  return requests.getStore();
}

/**
 * Runs `work` as no request's: for work shared by many requests that outlives the one that
 * started it (a live-status poller), which must not send or log that request's id.
 */
export function outsideRequests<T>(work: () => T): T {
  return requests.exit(work);
}
