/**
 * createGateway(deps): the HTTP layer, which only routes. A request to /graphql is admitted
 * from its headers alone (the operation entry's token and rate checks, before any body is read),
 * then handed to the adapter of its transport (src/transports/: json, sse, multipart; WebSocket
 * upgrades to websocket.ts), each of which runs its operation through the one operation entry
 * (src/transports/operation.ts); it is logged and counted once answered. The other paths of
 * docs/api.md are routed here too. No globals: everything it uses is passed in, so tests build
 * gateways against their own upstream servers on loopback.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Span } from '@opentelemetry/api';
import type { Authenticator } from './auth.ts';
import type { Businesses } from './businesses/registry.ts';
import type { GatewayError } from './errors.ts';
import { accepts, answerOf, negotiate } from './http/answer.ts';
import { createCors } from './http/cors.ts';
import { boundIdleSockets } from './http/idle-sockets.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import { UnderWay } from './http/under-way.ts';
import { type Logger, writeRequestLine } from './observability/logger.ts';
import { type GatewayMetrics, NO_BUSINESS } from './observability/metrics.ts';
import type { RequestSummary } from './observability/plugin.ts';
import { withRequestId } from './observability/request-context.ts';
import { throttledWarn } from './observability/throttled-log.ts';
import { endRequestSpan, traceRequest } from './observability/tracing.ts';
import { createPipeline, type PipelineDeps } from './pipeline.ts';
import type { SseReservations } from './state/sse-reservations.ts';
import { ConnectionSlots } from './transports/connections.ts';
import { createHttpTransport } from './transports/http.ts';
import type { StreamDeps } from './transports/io.ts';
import { type Admitted, createOperationEntry } from './transports/operation.ts';
import { createSseTransport, isSingleConnection } from './transports/sse.ts';
import { attachWebSocket } from './transports/websocket.ts';
import type { KycPageHandler } from './web/kycPage.ts';
import type { WebhookRouter } from './webhooks/handler.ts';

/** Readiness: whether the gateway can do useful work now, and why not. */
export type ReadinessCheck = () => Promise<{ ready: boolean; reasons: string[] }>;

export interface GatewayDeps extends PipelineDeps {
  authenticate: Authenticator;
  /** The businesses served (one without a businesses file), which tokens resolve to. */
  businesses: Businesses;
  logger: Logger;
  readiness: ReadinessCheck;
  /** Serves the KYC web page (`/kyc` and its assets) when it is on; absent, those paths 404. */
  kycPage?: KycPageHandler;
  /** Origins allowed by CORS; empty: no CORS at all. */
  corsOrigins: string[];
  /** Request headers allowed by CORS beyond the default list (`CORS_ALLOWED_HEADERS`). */
  corsAllowedHeaders?: string[];
  rateLimiter: RateLimiter;
  /** Long-lived connections: per caller (WebSockets + graphql-sse reservations) and per process. */
  connections?: {
    maxPerCaller: number;
    /** Time a graphql-sse reservation may stay without its stream opened (ms). */
    reservationUnusedMs?: number;
    maxSockets: number;
    maxIdleSocketsPerAddress?: number;
    streamMaxBufferedBytes?: number;
    streamWriteTimeoutMs?: number;
  };
  /** `POST /webhooks/*` (src/webhooks/), each business's with its secret; absent, those paths 404. */
  webhooks?: WebhookRouter;
  /** graphql-sse's reservations shared with other replicas; absent, this process's alone. */
  sseReservations?: SseReservations;
  /** Closes upstream pools and the cache. */
  close: () => Promise<void>;
  /**
   * Whether `/metrics` is served on the API port (`handle`); false when it has a listener of its
   * own (`METRICS_PORT`, `serveMetrics`).
   */
  metricsOnApiPort?: boolean;
}

export interface Gateway {
  /** A node:http request listener serving every path of docs/api.md. */
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** A node:http server for `handle`, with the slow-client timeouts set and WebSockets. */
  createServer: () => Server;
  /** Closes the WebSocket connections (1001), which would keep a closing server open. */
  closeWebSockets: () => Promise<void>;
  /**
   * Shutdown, first step: `/readyz` answers 503 from now on, so that load balancers take this
   * process out of rotation while it goes on serving everything else; every answer from now on
   * closes its connection (`Connection: close`), so that clients holding a keep-alive connection
   * (a balancer's pool, a Kubernetes Service's connection-level balancing) open their next one
   * elsewhere instead of finding it closed under a request when the listener closes.
   */
  drain: () => void;
  /**
   * Shutdown, once the listener is closed: WebSockets close with 1001 (clients reconnect
   * elsewhere), and every stream ends as its protocol ends one (SSE `complete`, multipart's
   * closing boundary).
   */
  endConnections: () => void;
  /** Destroys what `endConnections` asked to close and is still open (grace period over). */
  destroyConnections: () => void;
  /** `/metrics` alone, for a listener of its own (`METRICS_PORT`); every other path 404. */
  serveMetrics: (req: IncomingMessage, res: ServerResponse) => void;
  metrics: GatewayMetrics;
  logger: Logger;
  /** Connection slots held per caller (WebSockets + graphql-sse reservations). */
  connections: ConnectionSlots;
  /** The businesses served; with a businesses file, `replace` applies a reload. */
  businesses: Businesses;
  close: () => Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Headers on every `/graphql` answer: personal data, kept by no cache, its type not guessed. */
const PRIVATE_ANSWER_HEADERS = [
  ['cache-control', 'no-store'],
  ['x-content-type-options', 'nosniff'],
] as const;

function send(
  res: ServerResponse,
  status: number,
  body: string,
  type = 'text/plain; charset=utf-8',
) {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * Refuses a POST whose body is over the limit (413) or of unknown length (411) before a
 * transport reads it, so an oversized body is never buffered.
 */
function withinBodyLimit(req: IncomingMessage, res: ServerResponse, maxBytes: number): boolean {
  const length = req.headers['content-length'];
  const refuse = (status: number, message: string): false => {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      connection: 'close',
    });
    res.end(
      JSON.stringify({ errors: [{ message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }),
    );
    req.resume();
    return false;
  };
  if (length === undefined) return refuse(411, 'A POST body needs a Content-Length.');
  if (!/^\d+$/.test(length) || Number(length) > maxBytes) {
    return refuse(413, 'The request body is too large.');
  }
  return true;
}

/**
 * Answers a request the HTTP entry refuses before reading its body (no token, over its rate):
 * the error as a GraphQL response, with the error's HTTP status and headers. A body that was
 * sent is not read: the connection closes after the answer.
 */
function refuseEarly(req: IncomingMessage, res: ServerResponse, error: GatewayError): void {
  const { status, headers, body } = answerOf(
    { errors: [error] },
    negotiate(req.headers.accept) ?? 'application/json',
  );
  const unread =
    req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
  res.writeHead(status, {
    ...headers,
    'content-length': Buffer.byteLength(body),
    ...((unread || req.headers['transfer-encoding'] !== undefined) && { connection: 'close' }),
  });
  res.end(body);
}

/**
 * One log line and the request metrics of an operation that has ended: an HTTP request once
 * its response has gone out, an operation on a WebSocket once it has completed (`status` is the
 * HTTP status the same answer would have had).
 */
function logRequest(
  { metrics, logger, businesses }: Pick<GatewayDeps, 'metrics' | 'logger' | 'businesses'>,
  summary: RequestSummary,
  status: number,
  started: number,
  span: Span | undefined,
  transport: 'http' | 'websocket',
): void {
  const seconds = (performance.now() - started) / 1000;
  const operation = metrics.operationLabel(summary.operation, summary.caller);
  const outcome = summary.codes.length > 0 || status >= 400 ? 'error' : 'ok';
  // Named only when several are served, and only once admitted: an id of the businesses file.
  const business = businesses.several ? summary.business : undefined;
  // A label only while served: the last requests of a business a reload removed (its streams
  // ended) do not bring back the series removed with it.
  const label =
    business === undefined || businesses.get(business) === undefined ? NO_BUSINESS : { business };
  metrics.request(operation, outcome, label);
  metrics.observeDuration(summary.operationType, seconds, label);
  for (const code of summary.codes) metrics.graphqlErrors.inc({ operation, code, ...label });
  const context = span?.spanContext();
  writeRequestLine(logger, {
    requestId: summary.id,
    business,
    transport,
    operation,
    operationType: summary.operationType,
    status,
    durationMs: Math.round(seconds * 10_000) / 10,
    errorCodes: summary.codes,
    traceId: context?.traceId,
    spanId: context?.spanId,
  });
  if (span) endRequestSpan(span, summary, status);
}

/** `/metrics`: the Prometheus text of the registry. */
function sendMetrics(metrics: GatewayMetrics, res: ServerResponse): void {
  metrics.registry.metrics().then(
    (text) => send(res, 200, text, metrics.registry.contentType),
    () => send(res, 500, 'metrics unavailable\n'),
  );
}

/** The other paths: probes, metrics, the KYC page. */
function routeOthers(
  deps: Pick<GatewayDeps, 'readiness' | 'metrics' | 'kycPage' | 'metricsOnApiPort'>,
  draining: boolean,
  req: IncomingMessage,
  res: ServerResponse,
  path: string | undefined,
): void {
  if (path === '/healthz') {
    send(res, 200, 'ok\n');
    return;
  }
  if (path === '/readyz') {
    if (draining) {
      send(res, 503, 'shutting down\n');
      return;
    }
    deps.readiness().then(
      ({ ready, reasons }) =>
        send(res, ready ? 200 : 503, ready ? 'ready\n' : `${reasons.join('\n')}\n`),
      () => send(res, 503, 'readiness check failed\n'),
    );
    return;
  }
  if (path === '/metrics' && deps.metricsOnApiPort !== false) {
    sendMetrics(deps.metrics, res);
    return;
  }
  if (path !== undefined && deps.kycPage?.(req, res, path)) return;
  send(res, 404, 'not found\n');
}

/** Builds the gateway. */
export function createGateway(deps: GatewayDeps): Gateway {
  const { metrics, logger } = deps;
  const { graphiql, resolveDocument, getEnveloped } = createPipeline(deps);
  const entry = createOperationEntry({
    authenticate: deps.authenticate,
    businesses: deps.businesses,
    rateLimiter: deps.rateLimiter,
    documents: resolveDocument,
    getEnveloped,
    production: deps.hardening.production,
  });
  const limits = deps.connections ?? { maxPerCaller: 20, maxSockets: 10_000 };
  const slots = new ConnectionSlots(limits.maxPerCaller);
  metrics.connectionSlots = () => slots.total;
  const warn = throttledWarn(logger);
  const streams: StreamDeps = {
    limits: {
      maxBufferedBytes: limits.streamMaxBufferedBytes ?? 4 * 1024 * 1024,
      writeTimeoutMs: limits.streamWriteTimeoutMs ?? 30_000,
    },
    ended: (transport, reason) => {
      metrics.streamsEnded.inc({ transport, reason });
      warn(`stream-${reason}`, { transport, reason }, 'stream ended: its client does not read it');
    },
  };
  const sse = createSseTransport({
    entry,
    slots,
    streams,
    ...(deps.sseReservations && { reservations: deps.sseReservations }),
    ...(limits.reservationUnusedMs !== undefined && {
      reservationUnusedMs: limits.reservationUnusedMs,
    }),
  });
  const http = createHttpTransport(entry, streams);
  const cors = createCors({
    origins: deps.corsOrigins,
    ...(deps.corsAllowedHeaders && { extraHeaders: deps.corsAllowedHeaders }),
  });

  /** What needs no token: GraphiQL's page itself (a browser's GET; it executes nothing). */
  const wantsGraphiQL = (req: IncomingMessage): boolean =>
    req.method === 'GET' && accepts(req.headers.accept, 'text/html');

  let draining = false;
  /** Answers under way, until they have gone out (the drain marks them `Connection: close`). */
  const answering = new UnderWay<ServerResponse>();
  /** Upgraded sockets (WebSockets), which the server's own connection closing does not reach. */
  const upgraded = new Set<Duplex>();

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (draining) res.setHeader('connection', 'close');
    else {
      const place = answering.add(res);
      res.once('close', () => answering.remove(place));
    }
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/graphql') {
      if (deps.tracing) traceRequest(deps.tracing, req, (span) => serveGraphQL(req, res, span));
      else serveGraphQL(req, res, undefined);
      return;
    }
    if (deps.webhooks && path?.startsWith('/webhooks/')) {
      deps.webhooks(req, res);
      return;
    }
    routeOthers(deps, draining, req, res, path);
  };

  /** The adapter of an admitted request's transport. */
  const route = (
    req: IncomingMessage,
    res: ServerResponse,
    admitted: Admitted,
    summary: RequestSummary,
  ): Promise<void> => {
    const request = { req, res, admitted, summary };
    if (isSingleConnection(req)) return sse.serve(request);
    if (req.method === 'GET' || req.method === 'POST') return http(request);
    res.writeHead(405, { allow: 'GET, POST, PUT, DELETE', 'content-length': '0' });
    res.end();
    return Promise.resolve();
  };

  /** `/graphql`: CORS, admission from the headers, then a transport. */
  const serveGraphQL = (req: IncomingMessage, res: ServerResponse, span: Span | undefined) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', id);
    // Answers hold personal data: no cache keeps them, no browser guesses their type.
    for (const [name, value] of PRIVATE_ANSWER_HEADERS) res.setHeader(name, value);
    const summary: RequestSummary = { id, codes: [] };
    const started = performance.now();
    metrics.requestStarted();
    res.once('close', () => {
      metrics.requestEnded();
      logRequest(deps, summary, res.statusCode, started, span, 'http');
    });
    // Upstream calls send the id on, and log lines written meanwhile carry it.
    withRequestId(id, () => admitAndServe(req, res, summary));
  };

  /** Serves a request with its id set: CORS, admission from the headers, then a transport. */
  const admitAndServe = (req: IncomingMessage, res: ServerResponse, summary: RequestSummary) => {
    if (cors(req, res)) return;
    const failed = () => {
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    };
    if (graphiql && wantsGraphiQL(req)) {
      graphiql().then((page) => {
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-length': Buffer.byteLength(page),
        });
        res.end(page);
      }, failed);
      return;
    }
    entry.admit(req.headers.authorization ?? null).then((admitted) => {
      if ('code' in admitted) {
        summary.codes.push(admitted.code);
        refuseEarly(req, res, admitted);
        return;
      }
      if (req.method === 'POST' && !withinBodyLimit(req, res, deps.hardening.limits.bodyBytes))
        return;
      route(req, res, admitted, summary).catch(failed);
    }, failed);
  };

  const timeoutMs = deps.hardening.limits.requestTimeoutMs;
  const closeSockets = new Set<() => Promise<void>>();
  const closeWebSockets = async (): Promise<void> => {
    await Promise.allSettled([...closeSockets].map((close) => close()));
  };
  return {
    handle,
    createServer: () => {
      const server = createServer(
        {
          keepAliveTimeout: 65_000,
          // A client that sends its headers or body too slowly loses its connection (408).
          requestTimeout: timeoutMs,
          headersTimeout: Math.min(60_000, timeoutMs),
          connectionsCheckingInterval: Math.min(1000, timeoutMs),
          // Only a WebSocket upgrade is one: any other (`h2c`) is served over HTTP/1.1.
          shouldUpgradeCallback: (req: IncomingMessage) =>
            /^websocket$/i.test(req.headers.upgrade ?? ''),
        },
        handle,
      );
      server.maxConnections = limits.maxSockets;
      boundIdleSockets(server, limits.maxIdleSocketsPerAddress ?? 100);
      server.on('upgrade', (_req: IncomingMessage, socket: Duplex) => {
        upgraded.add(socket);
        socket.once('close', () => upgraded.delete(socket));
      });
      closeSockets.add(
        attachWebSocket(server, {
          path: '/graphql',
          maxPayload: deps.hardening.limits.bodyBytes,
          entry,
          slots,
          streams,
          summary: () => ({ id: randomUUID(), codes: [] }),
          finished: (summary, started, status) =>
            logRequest(deps, summary, status, started, undefined, 'websocket'),
          warn,
        }),
      );
      return server;
    },
    closeWebSockets,
    drain: () => {
      draining = true;
      for (const res of answering) if (!res.headersSent) res.setHeader('connection', 'close');
    },
    endConnections: () => {
      // WebSockets first: once their close has begun, graphql-ws sends no `complete` on them,
      // and their clients, seeing 1001, subscribe again elsewhere.
      void closeWebSockets();
      entry.endStreams();
      sse.close();
    },
    destroyConnections: () => {
      for (const socket of upgraded) socket.destroy();
    },
    serveMetrics: (req, res) => {
      if ((req.url ?? '/').split('?', 1)[0] === '/metrics') sendMetrics(metrics, res);
      else send(res, 404, 'not found\n');
    },
    metrics,
    logger,
    connections: slots,
    businesses: deps.businesses,
    close: async () => {
      sse.close();
      await closeWebSockets();
      await deps.close();
    },
  };
}
