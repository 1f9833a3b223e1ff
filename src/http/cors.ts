/**
 * CORS for every transport of `/graphql`, in one place: with `CORS_ORIGINS` set, a request from
 * a listed origin gets its `Access-Control-*` headers, and its preflight is answered here. The
 * allowed headers cover what the gateway's browser clients send (graphql-sse in both modes,
 * `multipart/mixed`, persisted queries, trace context, request ids); `CORS_ALLOWED_HEADERS`
 * adds more.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Headers a browser client of the gateway may send. */
export const DEFAULT_CORS_HEADERS: readonly string[] = [
  'authorization',
  'content-type',
  'accept',
  'x-request-id',
  'traceparent',
  'tracestate',
  'baggage',
  'x-graphql-event-stream-token',
  'x-graphql-yoga-csrf',
  'graphql-preflight',
  'apollo-require-preflight',
];

const METHODS = 'GET, POST, PUT, DELETE, OPTIONS';
const EXPOSED = 'x-request-id, retry-after';
const MAX_AGE_SECONDS = '600';

export interface CorsPolicy {
  /** Origins allowed; empty: no CORS at all. */
  origins: readonly string[];
  /** Headers added to {@link DEFAULT_CORS_HEADERS} (`CORS_ALLOWED_HEADERS`). */
  extraHeaders?: readonly string[];
}

/**
 * Sets the CORS headers of `req`'s answer. Returns true when the request was a preflight and
 * has been answered.
 */
export function createCors(
  policy: CorsPolicy,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const origins = new Set(policy.origins);
  const allowedHeaders = [
    ...new Set([
      ...DEFAULT_CORS_HEADERS,
      ...(policy.extraHeaders ?? []).map((h) => h.toLowerCase()),
    ]),
  ].join(', ');
  return (req, res) => {
    const origin = req.headers.origin;
    const preflight =
      req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (origins.size === 0 || origin === undefined) {
      if (!preflight) return false;
      res.writeHead(204, { 'content-length': '0' });
      res.end();
      return true;
    }
    res.setHeader('vary', 'Origin');
    if (!origins.has(origin)) {
      if (!preflight) return false;
      res.writeHead(204, { 'content-length': '0' });
      res.end();
      return true;
    }
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-expose-headers', EXPOSED);
    if (!preflight) return false;
    res.writeHead(204, {
      'access-control-allow-methods': METHODS,
      'access-control-allow-headers': allowedHeaders,
      'access-control-max-age': MAX_AGE_SECONDS,
      'content-length': '0',
    });
    res.end();
    return true;
  };
}
