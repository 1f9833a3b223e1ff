/**
 * A small round-robin load balancer on loopback, as an operator would put in front of replicas:
 * it probes each backend's `/readyz` every `probeMs` and sends requests (WebSocket upgrades
 * included) only to the backends whose last probe answered 200 (a probe that times out counts
 * only after two in a row, as a balancer's failure threshold does). A request it could not hand on,
 * or whose answer broke off before its headers, is answered 502 and counted.
 */
import { Agent, createServer, type IncomingMessage, request, type Server } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';

interface Backend {
  url: URL;
  ready: boolean;
  /** Probes in a row that timed out. */
  timeouts: number;
  /** The last probe that was answered said 503, or the connection was refused. */
  refused: boolean;
  agent: Agent;
}

const PROBE_TIMEOUT_MS = 2000;

export interface Balancer {
  url: string;
  /** Requests (and upgrades) answered 502 because the backend refused or reset them. */
  failures: { path: string; reason: string }[];
  /** Requests handed to each backend, by URL. */
  served: Map<string, number>;
  /** Whether the balancer currently sends traffic to `url`. */
  inRotation(url: string): boolean;
  close(): Promise<void>;
}

export async function startBalancer(urls: string[], probeMs = 500): Promise<Balancer> {
  const backends: Backend[] = urls.map((url) => ({
    url: new URL(url),
    ready: false,
    timeouts: 0,
    refused: false,
    agent: new Agent({ keepAlive: true }),
  }));
  const failures: Balancer['failures'] = [];
  const served = new Map<string, number>();
  let next = 0;

  /**
   * The next backend in rotation. With none, the ones only silent (probes timed out, no 503 and
   * no refusal): as Envoy's panic threshold and cloud balancers do, a busy backend is better
   * than none.
   */
  const pick = (): Backend | undefined =>
    pickWhere((b) => b.ready) ?? pickWhere((b) => b.timeouts > 0 && !b.refused);
  const pickWhere = (eligible: (backend: Backend) => boolean): Backend | undefined => {
    for (let i = 0; i < backends.length; i++) {
      const backend = backends[(next + i) % backends.length];
      if (backend && eligible(backend)) {
        next = (next + i + 1) % backends.length;
        served.set(backend.url.origin, (served.get(backend.url.origin) ?? 0) + 1);
        return backend;
      }
    }
    return undefined;
  };

  // As balancers do: an answer other than 200 or a refused connection takes a backend out at
  // once; a probe that times out (a busy machine) counts only when two in a row do.
  const probe = async (backend: Backend): Promise<void> => {
    try {
      const answer = await fetch(new URL('/readyz', backend.url), {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      await answer.arrayBuffer();
      backend.ready = answer.status === 200;
      backend.refused = !backend.ready;
      backend.timeouts = 0;
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      backend.timeouts = timedOut ? backend.timeouts + 1 : 0;
      if (!timedOut) backend.refused = true;
      if (!timedOut || backend.timeouts >= 2) backend.ready = false;
    }
  };
  await Promise.all(backends.map(probe));
  let probing = true;
  const loops = backends.map(async (backend) => {
    while (probing) {
      await new Promise((resolve) => setTimeout(resolve, probeMs));
      if (probing) await probe(backend);
    }
  });

  const server: Server = createServer((req, res) => {
    const backend = pick();
    const fail = (reason: string) => {
      failures.push({ path: req.url ?? '', reason });
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`bad gateway: ${reason}\n`);
      } else res.destroy();
    };
    if (!backend) {
      fail('no backend in rotation');
      return;
    }
    const outgoing = request(
      new URL(req.url ?? '/', backend.url),
      { method: req.method, headers: req.headers, agent: backend.agent },
      (answer: IncomingMessage) => {
        // Hop-by-hop headers are the backend connection's own (a proxy does not pass them on).
        const { connection: _, 'keep-alive': __, ...headers } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
        // An answer cut before its end (no closing event, no last chunk) reaches the client cut.
        answer.once('aborted', () => res.destroy());
      },
    );
    outgoing.once('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
    res.once('close', () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const backend = pick();
    if (!backend) {
      failures.push({ path: req.url ?? '', reason: 'no backend in rotation (upgrade)' });
      socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n');
      return;
    }
    const upstream = connect(Number(backend.url.port), backend.url.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      }
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.once('error', (error: NodeJS.ErrnoException) => {
      failures.push({ path: req.url ?? '', reason: `upgrade: ${error.code ?? error.message}` });
      socket.destroy();
    });
    socket.once('error', () => upstream.destroy());
    socket.once('close', () => upstream.destroy());
    upstream.once('close', () => socket.destroy());
  });

  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    failures,
    served,
    inRotation: (url) => backends.some((b) => b.url.origin === new URL(url).origin && b.ready),
    close: async () => {
      probing = false;
      await Promise.all(loops);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      for (const backend of backends) backend.agent.destroy();
    },
  };
}
