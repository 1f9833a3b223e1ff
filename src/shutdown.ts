/**
 * Graceful shutdown, in the order load balancers and Kubernetes expect it (docs/operations.md):
 *
 * 1. drain: `/readyz` answers 503 at once while everything else is served as before, for
 *    `SHUTDOWN_DRAIN_MS`, so that every balancer probing it takes this process out of rotation
 *    before its listener closes (no request is refused meanwhile); answers go out with
 *    `Connection: close`, so that keep-alive clients reconnect elsewhere;
 * 2. the listener closes; idle connections close, answers under way finish, streams end as
 *    their protocol ends one (SSE `complete`, multipart's closing boundary) and WebSockets close
 *    with 1001, so that clients reconnect elsewhere;
 * 3. what is still open when `SHUTDOWN_GRACE_MS` has passed since step 2 is cut.
 *
 * Node's own `server.close()` and `closeIdleConnections()` do the socket bookkeeping that
 * `http-terminator` and `stoppable` were written for; what they lack (the drain before the
 * listener closes, the readiness answer, streams and WebSockets ended by their protocol) is the
 * gateway's own, so it lives here and in server.ts rather than in a wrapper around them.
 */
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from './observability/logger.ts';
import type { Gateway } from './server.ts';

export interface ShutdownOptions {
  /** How long `/readyz` answers 503 before the listener closes (ms). */
  drainMs: number;
  /** How long answers and streams may take to finish once the listener is closed (ms). */
  graceMs: number;
  logger: Logger;
}

/** How often connections that became idle are closed while answers finish (ms). */
const SWEEP_MS = 50;

/**
 * Drains `gateway`, then closes `server` as above; resolves `clean` when every connection has
 * closed by itself within the grace period, `forced` when some had to be cut.
 */
export async function shutDown(
  server: Server,
  gateway: Pick<Gateway, 'drain' | 'endConnections' | 'destroyConnections'>,
  { drainMs, graceMs, logger }: ShutdownOptions,
): Promise<'clean' | 'forced'> {
  gateway.drain();
  if (drainMs > 0) {
    logger.info({ drainMs }, 'shutting down: /readyz answers 503, serving on for the drain period');
    await sleep(drainMs);
  }
  logger.info({ graceMs }, 'shutting down: listener closed, finishing answers and streams');
  const closed = new Promise<'clean'>((resolve) => server.close(() => resolve('clean')));
  gateway.endConnections();
  // Node closes the connections idle at the time of the call only; answers that finish later
  // leave theirs idle (or closed by `Connection: close`), hence the sweep.
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
  const grace = new AbortController();
  const outcome = await Promise.race([
    closed,
    sleep(graceMs, 'forced' as const, { signal: grace.signal }).catch(() => 'clean' as const),
  ]);
  clearInterval(sweep);
  grace.abort();
  if (outcome === 'forced') {
    logger.warn({ graceMs }, 'grace period over: closing the remaining connections');
    server.closeAllConnections();
    gateway.destroyConnections();
  }
  return outcome;
}
