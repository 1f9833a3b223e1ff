/**
 * A bound on idle sockets per remote address (`MAX_IDLE_SOCKETS_PER_ADDRESS`): a socket is idle
 * while no request is being served on it (just opened, or kept alive between requests). Every
 * second, the oldest idle sockets of an address beyond the bound (idle for a second at least) are
 * closed, so one host cannot keep the process's sockets (`MAX_CONNECTIONS`) while sending nothing,
 * and its newest connections are still served. Sockets serving a request, and WebSockets, are not
 * idle.
 *
 * Behind a load balancer or a proxy every connection comes from its address: the bound then
 * applies to the balancer's pool of kept-alive connections, and should be at least its size (or
 * `0`, off, leaving idle connections to the balancer and to the server's timeouts).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a socket must have been idle before it may be closed for the bound. */
const IDLE_GRACE_MS = 1000;
/** How often the bound is applied. */
const SWEEP_MS = 1000;

/** Applies the bound to `server`'s sockets; `maxPerAddress` 0 turns it off. */
export function boundIdleSockets(server: Server, maxPerAddress: number): void {
  if (maxPerAddress <= 0) return;
  /** Idle sockets by address, oldest first (a Map keeps insertion order), with when they rested. */
  const idle = new Map<string, Map<Socket, number>>();
  const addressOf = (socket: Socket) => socket.remoteAddress ?? '';

  const forget = (socket: Socket): void => {
    const address = addressOf(socket);
    const sockets = idle.get(address);
    if (!sockets?.delete(socket)) return;
    if (sockets.size === 0) idle.delete(address);
  };

  const rest = (socket: Socket): void => {
    if (socket.destroyed) return;
    const address = addressOf(socket);
    let sockets = idle.get(address);
    if (!sockets) {
      sockets = new Map();
      idle.set(address, sockets);
    }
    sockets.set(socket, performance.now());
  };

  /**
   * Closes the oldest idle sockets of each address over the bound. Only sockets idle for a moment
   * count as closable: a socket just opened (or just answered) may carry a request the server has
   * not read yet, and closing it would fail that request.
   */
  const sweep = (): void => {
    const settled = performance.now() - IDLE_GRACE_MS;
    for (const sockets of idle.values()) {
      let over = sockets.size - maxPerAddress;
      for (const [socket, since] of sockets) {
        if (over <= 0 || since > settled) break;
        forget(socket);
        socket.destroy();
        over -= 1;
      }
    }
  };
  const timer = setInterval(sweep, SWEEP_MS);
  timer.unref();
  server.once('close', () => clearInterval(timer));

  server.on('connection', (socket: Socket) => {
    rest(socket);
    socket.once('close', () => forget(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const { socket } = req;
    forget(socket);
    // Idle again (the newest of its address) once the answer has gone, unless it closed.
    res.once('close', () => {
      if (!socket.destroyed) rest(socket);
    });
  });
  server.on('upgrade', (req: IncomingMessage) => forget(req.socket));
}
