/**
 * What the HTTP adapters share: reading an operation from a request (query string or JSON body),
 * the signal of a client that went away, a frame of a streamed answer, a single result as a JSON
 * answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { requestError } from '../errors.ts';
import { type AnswerType, answerOf } from '../http/answer.ts';
import { readBytes } from '../http/body.ts';
import type { Waiting } from '../upstream/http.ts';
import { OPERATION_ENDED, type OperationParams } from './operation.ts';
import {
  type StreamEndReason,
  type StreamLimits,
  type StreamSink,
  StreamWriter,
} from './writer.ts';

/**
 * The whole body as text. Its size was bounded from `Content-Length` before (server.ts: 411
 * without one, 413 over `LIMIT_BODY_BYTES`), and Node stops a body at its announced length.
 */
export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBytes(req)).toString('utf8');
}

/**
 * The end of an HTTP request's client: looked at (`gone`: the response has closed, as its
 * connection is gone, or it has been sent) without anything made, or listened to (`abandoned`: a
 * signal, made when first asked for).
 */
export function clientEnd(res: ServerResponse): Waiting {
  return { gone: () => res.closed, abandoned: lazyClientGone(res) };
}

/** The end of an operation that a transport stops through `stop` (a stream, a socket's operation). */
export function stopEnd(stop: AbortController): Waiting {
  return { gone: () => stop.signal.aborted, abandoned: () => stop.signal };
}

/** Aborted when the client's connection closes. */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  // The response closes when it has been sent or its connection is gone, whichever comes first.
  if (res.closed) controller.abort(OPERATION_ENDED);
  else res.once('close', () => controller.abort(OPERATION_ENDED));
  return controller.signal;
}

/**
 * {@link clientGone}, made only when first asked for: most requests answer without anything
 * asking whether their client is still there, and then cost no controller, no listener and no
 * abort event.
 */
function lazyClientGone(res: ServerResponse): () => AbortSignal {
  let signal: AbortSignal | undefined;
  return () => {
    signal ??= clientGone(res);
    return signal;
  };
}

const JSON_BODY = /^application\/json\s*(;|$)/i;

/** Whether a POST's body is JSON (graphql-response+json is JSON too). */
export function hasJsonBody(req: IncomingMessage): boolean {
  const type = req.headers['content-type'] ?? '';
  return JSON_BODY.test(type) || /^application\/graphql-response\+json\s*(;|$)/i.test(type);
}

function jsonParameter(value: string | null, name: string): unknown {
  if (value === null || value === '') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    throw requestError(`The ${name} parameter is not valid JSON.`, 'GRAPHQL_PARSE_FAILED', 400);
  }
}

/** The operation in a GET's query string. Throws the request error for unreadable JSON. */
export function paramsOfQueryString(url: string | undefined): OperationParams {
  const search = new URLSearchParams((url ?? '').split('?')[1] ?? '');
  return {
    query: search.get('query') ?? undefined,
    variables: jsonParameter(search.get('variables'), 'variables'),
    operationName: search.get('operationName') ?? undefined,
    extensions: jsonParameter(search.get('extensions'), 'extensions'),
    documentId: search.get('documentId') ?? undefined,
  };
}

/** The operation in a JSON body. Throws the request error for anything but a JSON object. */
export function paramsOfBody(body: string): OperationParams {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw requestError('The request body is not valid JSON.', 'GRAPHQL_PARSE_FAILED', 400);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw requestError('The request body must be a JSON object.', 'GRAPHQL_PARSE_FAILED', 400);
  }
  const { query, variables, operationName, extensions, documentId } = parsed as Record<
    string,
    unknown
  >;
  if (
    extensions !== undefined &&
    extensions !== null &&
    (typeof extensions !== 'object' || Array.isArray(extensions))
  ) {
    throw requestError('extensions must be an object.', 'GRAPHQL_PARSE_FAILED', 400);
  }
  return { query, variables, operationName, extensions, documentId };
}

/** What the streaming transports need to bound their streams, and to count the ones they end. */
export interface StreamDeps {
  limits: StreamLimits;
  /** Called once for each stream a writer ended (`gateway_streams_ended_total`). */
  ended: (transport: StreamTransport, reason: StreamEndReason) => void;
}

export type StreamTransport = 'sse' | 'multipart' | 'websocket';

/** The sink of an HTTP answer: frames are written to it unless it has ended or its connection is gone. */
export function responseSink(res: ServerResponse): StreamSink {
  return {
    send: (frame, done) => {
      if (res.writableEnded || res.destroyed) done();
      else res.write(frame, () => done());
    },
    closed: () => res.writableEnded || res.destroyed,
  };
}

/**
 * The writer of a streamed HTTP answer (SSE, multipart). A stream it ends (a client that does not
 * read) is counted and its connection destroyed: that frees what waited in it, which a client
 * that does not read would never take, a closing frame included.
 */
export function responseWriter(
  res: ServerResponse,
  deps: StreamDeps,
  transport: StreamTransport,
): StreamWriter {
  const writer = new StreamWriter(
    deps.limits,
    (reason) => {
      deps.ended(transport, reason);
      res.destroy();
    },
    responseSink(res),
  );
  res.once('close', () => writer.close());
  return writer;
}

/** The operation of a GET or a JSON POST. Throws the request error for anything else. */
export async function readParams(req: IncomingMessage): Promise<OperationParams> {
  if (req.method === 'GET') return paramsOfQueryString(req.url);
  if (req.method !== 'POST' || !hasJsonBody(req)) {
    throw requestError(
      'Send the operation as JSON in a POST (Content-Type: application/json), or in a GET.',
      'GRAPHQL_PARSE_FAILED',
      415,
    );
  }
  return paramsOfBody(await readBody(req));
}

/** A single result as a JSON answer (status, headers and body from answer.ts). */
export function writeResult(res: ServerResponse, result: ExecutionResult, type: AnswerType): void {
  const { status, headers, body } = answerOf(result, type);
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The HTTP status a single result would have under `application/graphql-response+json`. */
export function statusOf(result: ExecutionResult): number {
  return answerOf(result, 'application/graphql-response+json').status;
}
