/**
 * The graphql-sse adapter (its PROTOCOL.md), both modes, on node:http:
 *
 * - distinct connections: `Accept: text/event-stream` on a GET or POST carrying the operation;
 *   the answer is its event stream (`next` events, then `complete`);
 * - single connection: `PUT` reserves a stream and answers its token; the event stream is opened
 *   with that token (`x-graphql-event-stream-token` or `?token=`); each operation is a POST with
 *   the token and `extensions.operationId`, answered 202, its results arriving on the stream as
 *   `next {id, payload}` then `complete {id}`; `DELETE ?operationId=` stops one.
 *
 * Tokens come from a CSPRNG and belong to the caller that reserved them: another caller's
 * request bearing one is refused (404) and nothing of it is delivered. A reservation takes one
 * of the caller's connection slots (`CONNECTIONS_MAX_PER_CALLER`, shared with WebSockets), is
 * dropped when its stream is not opened within 30 s, and is freed with everything it runs when
 * its stream closes or its token expires. Operations run through the operation entry; this file
 * only frames.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { GatewayError, requestError } from '../errors.ts';
import { accepts } from '../http/answer.ts';
import type { RequestSummary } from '../observability/plugin.ts';
import type { ConnectionSlots } from './connections.ts';
import {
  clientGone,
  readParams,
  responseSink,
  responseWriter,
  type StreamDeps,
  statusOf,
  writeResult,
} from './io.ts';
import {
  type Admitted,
  OPERATION_ENDED,
  type OperationEntry,
  type OperationOutcome,
  type OperationParams,
  publicResult,
} from './operation.ts';
import { StreamWriter } from './writer.ts';

export const TOKEN_HEADER = 'x-graphql-event-stream-token';
/** A reservation whose stream is not opened within this time is dropped. */
export const RESERVATION_UNUSED_MS = 30_000;
const PING_MS = 12_000;

export interface SseDeps {
  entry: OperationEntry;
  slots: ConnectionSlots;
  streams: StreamDeps;
  /** Time a reservation may stay unused (ms). */
  reservationUnusedMs?: number;
}

interface Reservation {
  token: string;
  caller: string;
  release: () => void;
  /** The open event stream, once connected. */
  stream?: ServerResponse;
  /** Writes to the stream; frames written before it is open wait in it, within the same bound. */
  writer: StreamWriter;
  /** The operations running, by id: their stop. */
  operations: Map<string, AbortController>;
  timers: ReturnType<typeof setTimeout>[];
}

/** One request of the adapter, once admitted. */
export interface SseRequest {
  req: IncomingMessage;
  res: ServerResponse;
  admitted: Admitted;
  summary: RequestSummary;
}

function frame(event: 'next' | 'complete', data: unknown): string {
  return `event: ${event}\ndata: ${data === undefined ? '' : JSON.stringify(data)}\n\n`;
}

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** Whether the request is one of graphql-sse's single-connection mode. */
export function isSingleConnection(req: IncomingMessage): boolean {
  return (
    req.method === 'PUT' ||
    req.method === 'DELETE' ||
    req.headers[TOKEN_HEADER] !== undefined ||
    /[?&]token=/.test(req.url ?? '')
  );
}

/** A refusal as a JSON answer with its status (under graphql-response+json's rules). */
function refuse(res: ServerResponse, result: ExecutionResult): void {
  writeResult(res, result, 'application/graphql-response+json');
}

/**
 * Distinct connections: writes an operation's outcome as its own event stream (`next` events,
 * then `complete`), each event as soon as its result exists. Resolves when the stream has ended.
 */
export async function writeEventStream(
  res: ServerResponse,
  outcome: OperationOutcome,
  streams: StreamDeps,
): Promise<void> {
  if (outcome.kind === 'result' && statusOf(outcome.result) >= 400) {
    refuse(res, outcome.result);
    return;
  }
  res.writeHead(200, STREAM_HEADERS);
  const writer = responseWriter(res, streams, 'sse');
  writer.write(':\n\n');
  const ping = setInterval(() => writer.writeIfIdle(':\n\n'), PING_MS);
  try {
    const write = (result: ExecutionResult) => writer.write(frame('next', publicResult(result)));
    if (outcome.kind === 'result') write(outcome.result);
    else await pump(outcome, write, writer);
    if (!writer.ended) res.end(frame('complete', undefined));
  } finally {
    clearInterval(ping);
    writer.close();
  }
}

/**
 * Writes a stream's results until it ends, or its writer does; the next result is pulled only
 * once the client has taken the previous ones. The stream is returned (stopped) either way.
 */
async function pump(
  outcome: Extract<OperationOutcome, { kind: 'stream' }>,
  write: (result: ExecutionResult) => void,
  writer: StreamWriter,
): Promise<void> {
  try {
    while (await writer.ready()) {
      const next = await outcome.stream.next();
      if (next.done) return;
      write(next.value);
    }
  } finally {
    void outcome.stream.return();
  }
}

/** Builds the single-connection adapter. */
export function createSseTransport(deps: SseDeps) {
  const { entry, slots, streams } = deps;
  const unusedMs = deps.reservationUnusedMs ?? RESERVATION_UNUSED_MS;
  const reservations = new Map<string, Reservation>();

  const dispose = (reservation: Reservation): void => {
    if (reservations.get(reservation.token) !== reservation) return;
    reservations.delete(reservation.token);
    for (const timer of reservation.timers) clearTimeout(timer);
    for (const stop of reservation.operations.values()) stop.abort(OPERATION_ENDED);
    reservation.operations.clear();
    reservation.release();
    reservation.writer.close();
    reservation.stream?.end();
  };

  /** The token a single-connection request bears. */
  const tokenOf = (req: IncomingMessage): string | undefined => {
    const header = req.headers[TOKEN_HEADER];
    if (typeof header === 'string' && header !== '') return header;
    return new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('token') ?? undefined;
  };

  const reserve = ({ res, admitted }: SseRequest): void => {
    const release = slots.take(admitted.caller);
    if (!release) {
      refuse(res, {
        errors: [
          new GatewayError(
            'RATE_LIMITED',
            'This caller holds its most connections; close one before opening another.',
            { http: { status: 429, headers: { 'Retry-After': '1' } } },
          ),
        ],
      });
      return;
    }
    const token = randomBytes(32).toString('base64url');
    const reservation: Reservation = {
      token,
      caller: admitted.caller,
      release,
      // A client that does not read its stream (or never opens it) loses the reservation.
      writer: new StreamWriter(streams.limits, (reason) => {
        streams.ended('sse', reason);
        reservation.stream?.destroy();
        dispose(reservation);
      }),
      operations: new Map(),
      timers: [],
    };
    reservations.set(token, reservation);
    reservation.timers.push(
      setTimeout(() => {
        if (!reservation.stream) dispose(reservation);
      }, unusedMs).unref(),
    );
    // Past the token's expiry (and a moment for its operations' last events), the stream ends.
    if (Number.isFinite(admitted.expiresAt)) {
      reservation.timers.push(
        setTimeout(
          () => dispose(reservation),
          Math.min(Math.max(0, admitted.expiresAt - Date.now()) + 1000, 2 ** 31 - 1),
        ).unref(),
      );
    }
    res.writeHead(201, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(token);
  };

  const connect = (reservation: Reservation, { res }: SseRequest): void => {
    if (reservation.stream) {
      refuse(res, {
        errors: [requestError('The stream is open already.', 'BAD_USER_INPUT', 409)],
      });
      return;
    }
    reservation.stream = res;
    res.writeHead(200, STREAM_HEADERS);
    res.write(':\n\n');
    reservation.writer.attach(responseSink(res));
    const ping = setInterval(() => reservation.writer.writeIfIdle(':\n\n'), PING_MS);
    const gone = clientGone(res);
    gone.addEventListener('abort', () => {
      clearInterval(ping);
      dispose(reservation);
    });
  };

  const single = async (request: SseRequest): Promise<void> => {
    const { req, res, admitted, summary } = request;
    if (req.method === 'PUT') {
      reserve(request);
      return;
    }
    const token = tokenOf(req);
    const reservation = token === undefined ? undefined : reservations.get(token);
    if (!reservation || reservation.caller !== admitted.caller) {
      refuse(res, {
        errors: [
          requestError(
            'No stream is reserved under this token for this caller.',
            'BAD_USER_INPUT',
            404,
          ),
        ],
      });
      return;
    }
    if (
      accepts(req.headers.accept, 'text/event-stream') &&
      (req.method === 'GET' || req.method === 'POST')
    ) {
      connect(reservation, request);
      return;
    }
    if (req.method === 'DELETE') {
      const id = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('operationId');
      if (id === null || id === '') {
        refuse(res, { errors: [requestError('operationId is missing.', 'BAD_USER_INPUT', 400)] });
        return;
      }
      reservation.operations.get(id)?.abort(OPERATION_ENDED);
      reservation.operations.delete(id);
      res.writeHead(200, { 'content-length': '0' });
      res.end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST, PUT, DELETE', 'content-length': '0' });
      res.end();
      return;
    }
    let params: OperationParams;
    try {
      params = await readParams(req);
    } catch (error) {
      refuse(res, { errors: [error as GatewayError] });
      return;
    }
    const extensions = (params.extensions ?? {}) as Record<string, unknown>;
    const id = extensions.operationId;
    if (typeof id !== 'string' || id === '' || id.length > 128) {
      refuse(res, { errors: [requestError('operationId is missing.', 'BAD_USER_INPUT', 400)] });
      return;
    }
    if (reservation.operations.has(id)) {
      refuse(res, {
        errors: [requestError('An operation with this id is running.', 'BAD_USER_INPUT', 409)],
      });
      return;
    }
    const stop = new AbortController();
    reservation.operations.set(id, stop);
    const outcome = await entry.operate({
      admitted,
      params,
      method: 'POST',
      req,
      summary,
      signal: stop.signal,
      parts: true,
    });
    const finished = () => {
      if (reservation.operations.get(id) === stop) reservation.operations.delete(id);
    };
    if (outcome.kind === 'result' && statusOf(outcome.result) >= 400) {
      finished();
      refuse(res, outcome.result);
      return;
    }
    if (stop.signal.aborted || reservation.operations.get(id) !== stop) {
      // Stopped (DELETE, the stream closed) while it was being prepared.
      if (outcome.kind === 'stream') void outcome.stream.return();
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(202, { 'content-length': '0' });
    res.end();
    const { writer } = reservation;
    const write = (result: ExecutionResult) =>
      writer.write(frame('next', { id, payload: publicResult(result) }));
    if (outcome.kind === 'result') write(outcome.result);
    else await pump(outcome, write, writer);
    // Completed unless it was stopped: a stopped operation's client knows already.
    if (reservation.operations.get(id) === stop) {
      writer.write(frame('complete', { id }));
      finished();
    }
  };

  return {
    /** Serves one admitted request of the single-connection mode. */
    serve: single,
    /** Reservations held now (tests, metrics). */
    get reservations(): number {
      return reservations.size;
    },
    /** Ends every stream (shutdown), each operation still running with its `complete`. */
    close: (): void => {
      for (const reservation of [...reservations.values()]) {
        if (reservation.stream)
          for (const id of reservation.operations.keys())
            reservation.writer.write(frame('complete', { id }));
        dispose(reservation);
      }
    },
  };
}

export type SseTransport = ReturnType<typeof createSseTransport>;
