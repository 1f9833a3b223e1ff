/**
 * createGateway(deps): the HTTP layer around the pipeline (pipeline.ts). A request to /graphql
 * is admitted from its headers alone (token, then the caller's rate), then served by the JSON
 * transport or Yoga's handler, and logged and counted once it is answered; the other paths of
 * docs/api.md are routed here too. No globals: everything it uses is passed in, so tests build
 * gateways against their own upstream servers on loopback.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ExecutionResult } from 'graphql';
import type { YogaInitialContext } from 'graphql-yoga';
import { type Authenticator, NO_ACCESS, type Viewer } from './auth.ts';
import type { RecordSources } from './cache/sources.ts';
import type { ResolverSettings } from './context.ts';
import { GatewayError, RateLimitedError, UnauthenticatedError } from './errors.ts';
import { type HardeningOptions, withContractCodes } from './graphql/hardening.ts';
import type { PersistedStore } from './graphql/persisted.ts';
import { jsonAnswerType } from './http/json-transport.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import { attachWebSocket, type EnvelopedWithSubscribe } from './http/websocket.ts';
import type { LiveStatusHub } from './live/hub.ts';
import type { Logger } from './observability/logger.ts';
import type { GatewayMetrics } from './observability/metrics.ts';
import type { RequestSummary } from './observability/plugin.ts';
import type { Tracing } from './observability/tracing.ts';
import {
  createPipeline,
  type NodeServerContext,
  PRIVATE_ANSWER_HEADERS,
  SSE_STREAM_PATH,
} from './pipeline.ts';
import type { CallerShare } from './upstream/caller-share.ts';
import type { KycPageHandler } from './web/kycPage.ts';
import type { WebhookHandler } from './webhooks/handler.ts';

/** A request of graphql-sse's single-connection mode: a reservation, or one bearing its token. */
function isSingleConnectionSse(req: IncomingMessage): boolean {
  return (
    req.method === 'PUT' ||
    req.method === 'DELETE' ||
    req.headers['x-graphql-event-stream-token'] !== undefined ||
    /[?&]token=/.test(req.url ?? '')
  );
}

/** Who the HTTP entry let in. */
type Admitted = Pick<NodeServerContext, 'viewer' | 'caller'>;

/** Readiness: whether the gateway can do useful work now, and why not. */
export type ReadinessCheck = () => Promise<{ ready: boolean; reasons: string[] }>;

export interface GatewayDeps {
  sources: RecordSources;
  authenticate: Authenticator;
  settings: ResolverSettings;
  graphiql: false | { headers?: Record<string, string> };
  metrics: GatewayMetrics;
  logger: Logger;
  readiness: ReadinessCheck;
  /** Serves the KYC web page (`/kyc` and its assets) when it is on; absent, those paths 404. */
  kycPage?: KycPageHandler;
  hardening: HardeningOptions;
  /** Origins allowed by CORS; empty: no CORS at all. */
  corsOrigins: string[];
  rateLimiter: RateLimiter;
  /** Documents clients registered by hash (automatic persisted queries). */
  persistedStore: PersistedStore;
  /** OpenTelemetry spans of requests, when tracing is on. */
  tracing?: Tracing;
  /** Each caller's share of upstream concurrency; absent, no per-caller bound. */
  callerShare?: CallerShare;
  /** The JSON transport for JSON POSTs (default on); off, every request goes through Yoga's handler. */
  fastPath?: boolean;
  /** Live records (`transactionStatus`, `kycStatus`). */
  live: LiveStatusHub;
  /** `POST /webhooks/*` (src/webhooks/), when `WEBHOOK_SECRET` is set; absent, those paths 404. */
  webhooks?: WebhookHandler;
  /** Closes upstream pools and the cache. */
  close: () => Promise<void>;
}

export interface Gateway {
  /** A node:http request listener serving every path of docs/api.md. */
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** A node:http server for `handle`, with the slow-client timeouts set and WebSockets. */
  createServer: () => Server;
  /** Closes the WebSocket connections (1001), which would keep a closing server open. */
  closeWebSockets: () => Promise<void>;
  metrics: GatewayMetrics;
  logger: Logger;
  close: () => Promise<void>;
}

/** Headers that describe one connection's framing, not the answer: never copied over. */
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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
 * Refuses a POST whose body is over the limit (413) or of unknown length (411) before Yoga
 * reads it, so an oversized body is never buffered.
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
  const { http, ...extensions } = error.extensions as {
    http?: { status?: number; headers?: Record<string, string> };
  };
  const accept = req.headers.accept ?? '';
  const type = accept.includes('application/graphql-response+json')
    ? 'application/graphql-response+json; charset=utf-8'
    : 'application/json; charset=utf-8';
  const body = JSON.stringify({ errors: [{ message: error.message, extensions }] });
  const unread =
    req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
  res.writeHead(http?.status ?? 400, {
    ...http?.headers,
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    ...((unread || req.headers['transfer-encoding'] !== undefined) && { connection: 'close' }),
  });
  res.end(body);
}

/**
 * The whole body as text, from the stream's events (an async iterator over the request added a
 * promise per chunk). Rejects when the client goes away before the end.
 */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete) reject(new Error('the request was cut short'));
    });
  });
}

/** Admission from the headers alone, the same for every transport. */
function createAdmission(deps: Pick<GatewayDeps, 'authenticate' | 'rateLimiter'>) {
  /**
   * The token, then the caller's rate, from the headers alone: a request without a valid token
   * or over its rate costs no body read, no parse and no validation.
   */
  const admit = async (req: IncomingMessage): Promise<GatewayError | Admitted> => {
    const admitted = await identify(req.headers.authorization ?? null, req);
    if (admitted instanceof GatewayError) return admitted;
    return (await charge(admitted)) ?? admitted;
  };

  /** The caller a token names, or UNAUTHENTICATED (the same for every transport). */
  const identify = async (
    authorization: string | null,
    req: IncomingMessage,
  ): Promise<GatewayError | Admitted> => {
    let viewer: Viewer;
    try {
      viewer = await deps.authenticate(authorization);
    } catch (error) {
      if (error instanceof UnauthenticatedError) return error;
      throw error;
    }
    const caller = viewer.subject
      ? `sub:${viewer.subject}`
      : `ip:${req.socket.remoteAddress ?? ''}`;
    return { viewer, caller };
  };

  /** One request (or WebSocket operation) on the caller's rate, or RATE_LIMITED. */
  const charge = async ({ viewer, caller }: Admitted): Promise<GatewayError | undefined> => {
    const kind = viewer.scopes.size > 0 ? 'service' : 'endUser';
    const decision = await deps.rateLimiter.take(caller, kind);
    return decision.allowed ? undefined : new RateLimitedError(decision.retryAfterSeconds);
  };
  return { admit, identify, charge };
}

/** One log line and the request metrics, when the response has gone out. */
function logRequest(
  { metrics, logger }: Pick<GatewayDeps, 'metrics' | 'logger'>,
  summary: RequestSummary,
  res: ServerResponse,
  started: number,
  span: Span | undefined,
): void {
  metrics.requestsInFlight.dec();
  const seconds = (performance.now() - started) / 1000;
  const operation = metrics.operationLabel(summary.operation);
  const outcome = summary.codes.length > 0 || res.statusCode >= 400 ? 'error' : 'ok';
  metrics.graphqlRequests.inc({ operation, outcome });
  metrics.requestDuration.observe({ operation }, seconds);
  for (const code of summary.codes) metrics.graphqlErrors.inc({ operation, code });
  logger.info(
    {
      requestId: summary.id,
      operation,
      status: res.statusCode,
      durationMs: Math.round(seconds * 10_000) / 10,
      errorCodes: summary.codes,
      ...(span && { traceId: span.spanContext().traceId, spanId: span.spanContext().spanId }),
    },
    'graphql request',
  );
  if (span) {
    if (summary.operationType) {
      span.updateName(`graphql ${summary.operationType} ${summary.operation ?? ''}`.trim());
    }
    span.setAttributes({
      'http.response.status_code': res.statusCode,
      'graphql.operation.name': operation,
      ...(summary.operationType && { 'graphql.operation.type': summary.operationType }),
      'gateway.request_id': summary.id,
      'gateway.error_codes': summary.codes,
    });
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }
}

/** The other paths: probes, metrics, the KYC page. */
function routeOthers(
  deps: Pick<GatewayDeps, 'readiness' | 'metrics' | 'kycPage'>,
  req: IncomingMessage,
  res: ServerResponse,
  path: string | undefined,
): void {
  if (path === '/healthz') {
    send(res, 200, 'ok\n');
    return;
  }
  if (path === '/readyz') {
    deps.readiness().then(
      ({ ready, reasons }) =>
        send(res, ready ? 200 : 503, ready ? 'ready\n' : `${reasons.join('\n')}\n`),
      () => send(res, 503, 'readiness check failed\n'),
    );
    return;
  }
  if (path === '/metrics') {
    deps.metrics.registry.metrics().then(
      (text) => send(res, 200, text, deps.metrics.registry.contentType),
      () => send(res, 500, 'metrics unavailable\n'),
    );
    return;
  }
  if (path !== undefined && deps.kycPage?.(req, res, path)) return;
  send(res, 404, 'not found\n');
}

/**
 * A buffered POST the JSON transport declined, answered by Yoga's handler through its Fetch
 * interface (the body has been read already).
 */
async function postToYoga(
  yoga: ReturnType<typeof createPipeline>['yoga'],
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  context: NodeServerContext,
): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const response = await yoga.fetch(
    `http://${req.headers.host ?? 'localhost'}${req.url ?? '/graphql'}`,
    { method: 'POST', headers, body },
    context,
  );
  const answer = Buffer.from(await response.arrayBuffer());
  const outgoing: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) outgoing[name] = value;
  });
  res.writeHead(response.status, { ...outgoing, 'content-length': answer.length });
  res.end(answer);
}

/** Builds the gateway. */
export function createGateway(deps: GatewayDeps): Gateway {
  const { metrics, logger } = deps;
  const { yoga, serveJson } = createPipeline(deps);
  const { admit, identify, charge } = createAdmission(deps);

  /** Whether a POST may try the JSON transport (CORS, streams and trusted-only are Yoga's). */
  const transportEligible = (req: IncomingMessage): boolean =>
    deps.fastPath !== false &&
    deps.hardening.trustedDocuments !== 'only' &&
    jsonAnswerType(req) !== undefined &&
    !(deps.corsOrigins.length > 0 && req.headers.origin !== undefined);

  /** Reads the (length-checked) body, tries the JSON transport, else hands the body to Yoga. */
  const serveBuffered = async (
    req: IncomingMessage,
    res: ServerResponse,
    context: NodeServerContext,
  ): Promise<void> => {
    const body = await readBody(req);
    const outcome = await serveJson(req, res, body, context);
    metrics.jsonTransport.inc({ outcome });
    if (outcome === 'declined') await postToYoga(yoga, req, res, body, context);
  };

  /** What needs no token: GraphiQL's page itself, and CORS preflights (neither executes). */
  const servedWithoutToken = (req: IncomingMessage): boolean =>
    req.method === 'OPTIONS' ||
    (deps.graphiql !== false &&
      req.method === 'GET' &&
      (req.headers.accept ?? '').includes('text/html'));

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/graphql') {
      const { tracing } = deps;
      if (!tracing) {
        serveGraphQL(req, res, undefined);
        return;
      }
      // A SERVER span, continuing the caller's trace; active for all the request's work.
      const parent = tracing.extract(req.headers);
      const span = tracing.tracer.startSpan(
        'graphql request',
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method ?? '' } },
        parent,
      );
      context.with(trace.setSpan(parent, span), () => serveGraphQL(req, res, span));
      return;
    }
    if (deps.webhooks && path?.startsWith('/webhooks/')) {
      deps.webhooks(req, res);
      return;
    }
    routeOthers(deps, req, res, path);
  };

  /** `/graphql`: admission from the headers, then a transport. */
  const serveGraphQL = (req: IncomingMessage, res: ServerResponse, span: Span | undefined) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', id);
    // Answers hold personal data: no cache keeps them, no browser guesses their type (for
    // what Yoga answers, its own headers are replaced by usePrivateAnswers).
    for (const [name, value] of PRIVATE_ANSWER_HEADERS) res.setHeader(name, value);
    const summary: RequestSummary = { id, codes: [] };
    const started = performance.now();
    metrics.requestsInFlight.inc();
    res.once('close', () => logRequest(deps, summary, res, started, span));
    if (servedWithoutToken(req)) {
      void yoga.handle(req, res, { req, res, summary, viewer: NO_ACCESS, caller: '' });
      return;
    }
    admit(req).then(
      (admitted) => {
        if ('code' in admitted) {
          summary.codes.push(admitted.code);
          refuseEarly(req, res, admitted);
          return;
        }
        if (req.method === 'POST' && !withinBodyLimit(req, res, deps.hardening.limits.bodyBytes))
          return;
        const context: NodeServerContext = { req, res, summary, ...admitted };
        // graphql-sse's single-connection mode (a reserved stream, then operations bearing
        // its token) is served by its handler, at its own path inside Yoga.
        if (isSingleConnectionSse(req)) {
          req.url = `${SSE_STREAM_PATH}${req.url?.slice('/graphql'.length) ?? ''}`;
          void yoga.handle(req, res, context);
          return;
        }
        if (transportEligible(req)) {
          serveBuffered(req, res, context).catch(() => {
            if (!res.headersSent) send(res, 500, 'internal error\n');
            else res.destroy();
          });
          return;
        }
        void yoga.handle(req, res, context);
      },
      () => {
        if (!res.headersSent) send(res, 500, 'internal error\n');
      },
    );
  };

  const timeoutMs = deps.hardening.limits.requestTimeoutMs;
  const closeSockets = new Set<() => Promise<void>>();
  const finishResult = (result: ExecutionResult) => withContractCodes(result);
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
        },
        handle,
      );
      closeSockets.add(
        attachWebSocket<Admitted>(server, {
          path: '/graphql',
          maxPayload: deps.hardening.limits.bodyBytes,
          identify,
          charge,
          getEnveloped: (admitted, req) => {
            const summary: RequestSummary = { id: randomUUID(), codes: [] };
            const initial = { req, summary, ...admitted } as NodeServerContext & YogaInitialContext;
            return yoga.getEnveloped(initial) as unknown as EnvelopedWithSubscribe;
          },
          finish: finishResult,
        }),
      );
      return server;
    },
    closeWebSockets,
    metrics,
    logger,
    close: async () => {
      await closeWebSockets();
      await deps.close();
    },
  };
}
