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
 *
 * Behind a round-robin balancer (reservations shared, state/sse-reservations.ts): the replica
 * that opens a reservation's stream becomes its holder, and every operation and stop of that
 * reservation runs there, wherever it was POSTed: the replica it reached relays it, sealed, and
 * answers what the holder answered. The holder identifies the token again and checks that it is
 * the reservation's caller, and its operations go through the same entry and the stream's one
 * writer as those POSTed to it directly. When the holder's stream ends (or the holder dies), the
 * reservation is gone and its token answers 404 everywhere. Operations POSTed before the stream
 * is open are refused (409) then, as no replica holds it yet; graphql-sse's client opens the
 * stream first.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { GatewayError, requestError } from '../errors.ts';
import { accepts, answerOf } from '../http/answer.ts';
import type { RequestSummary } from '../observability/plugin.ts';
import {
  MemorySseReservations,
  type RelayAnswer,
  type RelayRequest,
  type SseReservations,
} from '../state/sse-reservations.ts';
import type { ConnectionSlots } from './connections.ts';
import {
  clientGone,
  readParams,
  responseSink,
  responseWriter,
  type StreamDeps,
  statusOf,
  stopEnd,
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
/** How long a stream's holder keeps its claim without renewing it (it renews a third of the way). */
export const HOLDER_LEASE_MS = 30_000;
/** How long a replica waits for the holder of a stream to answer a request it relayed. */
export const RELAY_TIMEOUT_MS = 10_000;

export interface SseDeps {
  entry: OperationEntry;
  slots: ConnectionSlots;
  streams: StreamDeps;
  /** Time a reservation may stay unused (ms). */
  reservationUnusedMs?: number;
  /** Where reservations are shared with other replicas; by default, nowhere (this process). */
  reservations?: SseReservations;
  /** The holder's lease on a stream (ms), {@link HOLDER_LEASE_MS} by default. */
  leaseMs?: number;
  /** How long a relayed request waits for the holder (ms), {@link RELAY_TIMEOUT_MS} by default. */
  relayTimeoutMs?: number;
}

interface Reservation {
  token: string;
  caller: string;
  release: () => void;
  /** The open event stream, once connected here, and its request. */
  stream?: ServerResponse;
  req?: IncomingMessage;
  /** Hearing what other replicas relay for the stream (shared reservations). */
  stopListening?: Promise<() => void>;
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

/** An HTTP answer written as it is (`content-length` added). */
function send(res: ServerResponse, answer: RelayAnswer): void {
  res.writeHead(answer.status, {
    ...answer.headers,
    'content-length': Buffer.byteLength(answer.body),
  });
  res.end(answer.body);
}

/** A refusal as an answer (graphql-response+json), with the codes it carries. */
function refusal(result: ExecutionResult): RelayAnswer {
  const codes = (result.errors ?? []).flatMap((error) => {
    const code = error.extensions?.code;
    return typeof code === 'string' ? [code] : [];
  });
  return { ...answerOf(result, 'application/graphql-response+json'), codes };
}

const EMPTY = (status: number): RelayAnswer => ({
  status,
  headers: {},
  body: '',
  codes: [],
});

const NOT_RESERVED = (): RelayAnswer =>
  refusal({
    errors: [
      requestError(
        'No stream is reserved under this token for this caller.',
        'BAD_USER_INPUT',
        404,
      ),
    ],
  });

/** Whether the request opens a reservation's event stream. */
function opensStream(req: IncomingMessage): boolean {
  return (
    accepts(req.headers.accept, 'text/event-stream') &&
    (req.method === 'GET' || req.method === 'POST')
  );
}

/** What a DELETE or an operation's POST asks; undefined when refused (answered here). */
async function readRequest(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<
  { kind: 'stop'; operationId: string } | { kind: 'operate'; params: OperationParams } | undefined
> {
  if (req.method === 'DELETE') {
    const id = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('operationId');
    if (id !== null && id !== '') return { kind: 'stop', operationId: id };
    refuse(res, { errors: [requestError('operationId is missing.', 'BAD_USER_INPUT', 400)] });
    return undefined;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'GET, POST, PUT, DELETE', 'content-length': '0' });
    res.end();
    return undefined;
  }
  try {
    return { kind: 'operate', params: await readParams(req) };
  } catch (error) {
    refuse(res, { errors: [error as GatewayError] });
    return undefined;
  }
}

/** Builds the single-connection adapter. */
export function createSseTransport(deps: SseDeps) {
  const { entry, slots, streams } = deps;
  const unusedMs = deps.reservationUnusedMs ?? RESERVATION_UNUSED_MS;
  const leaseMs = deps.leaseMs ?? HOLDER_LEASE_MS;
  const relayTimeoutMs = deps.relayTimeoutMs ?? RELAY_TIMEOUT_MS;
  const store = deps.reservations ?? new MemorySseReservations();
  /** The reservations this replica made, or whose stream it holds. */
  const reservations = new Map<string, Reservation>();

  const dispose = (reservation: Reservation): void => {
    if (reservations.get(reservation.token) !== reservation) return;
    reservations.delete(reservation.token);
    for (const timer of reservation.timers) clearTimeout(timer);
    for (const stop of reservation.operations.values()) stop.abort(OPERATION_ENDED);
    reservation.operations.clear();
    reservation.release();
    reservation.writer.close();
    reservation.stopListening?.then((stop) => stop());
    reservation.stream?.end();
    // Forgotten everywhere, unless another replica holds its stream.
    void store.drop(reservation.token);
  };

  /** The token a single-connection request bears. */
  const tokenOf = (req: IncomingMessage): string | undefined => {
    const header = req.headers[TOKEN_HEADER];
    if (typeof header === 'string' && header !== '') return header;
    return new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('token') ?? undefined;
  };

  const tooMany = (): RelayAnswer =>
    refusal({
      errors: [
        new GatewayError(
          'RATE_LIMITED',
          'This caller holds its most connections; close one before opening another.',
          { http: { status: 429, headers: { 'Retry-After': '1' } } },
        ),
      ],
    });

  /** A reservation of this replica's, holding a connection slot of its caller's. */
  const track = (token: string, admitted: Admitted, release: () => void): Reservation => {
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
    return reservation;
  };

  const reserve = async ({ res, admitted }: SseRequest): Promise<void> => {
    const release = slots.take(admitted.caller);
    if (!release) {
      send(res, tooMany());
      return;
    }
    const token = randomBytes(32).toString('base64url');
    track(token, admitted, release);
    await store.reserve(token, admitted.caller, unusedMs);
    res.writeHead(201, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(token);
  };

  /**
   * Opens the reservation's event stream on this replica, which becomes its holder: operations
   * POSTed on any replica run here, where the stream's one writer is.
   */
  const connect = async (reservation: Reservation, { req, res }: SseRequest): Promise<void> => {
    if (reservation.stream) {
      send(
        res,
        refusal({ errors: [requestError('The stream is open already.', 'BAD_USER_INPUT', 409)] }),
      );
      return;
    }
    reservation.stream = res;
    reservation.req = req;
    const gone = clientGone(res);
    gone.addEventListener('abort', () => dispose(reservation));
    if (!(await store.claim(reservation.token, leaseMs))) {
      // Its stream is open on another replica.
      reservation.stream = undefined;
      dispose(reservation);
      send(
        res,
        refusal({ errors: [requestError('The stream is open already.', 'BAD_USER_INPUT', 409)] }),
      );
      return;
    }
    if (store.shared) {
      reservation.stopListening = store.listen(reservation.token, (request) =>
        serveRelayed(reservation, request),
      );
      await reservation.stopListening;
      const renew = setInterval(() => void store.renew(reservation.token, leaseMs), leaseMs / 3);
      renew.unref();
      reservation.timers.push(renew);
    }
    if (gone.aborted || reservations.get(reservation.token) !== reservation) return;
    res.writeHead(200, STREAM_HEADERS);
    res.write(':\n\n');
    reservation.writer.attach(responseSink(res));
    const ping = setInterval(() => reservation.writer.writeIfIdle(':\n\n'), PING_MS);
    reservation.timers.push(ping);
  };

  /** Stops one of the reservation's operations (DELETE): its client completes it itself. */
  const stopOperation = (reservation: Reservation, id: string): RelayAnswer => {
    reservation.operations.get(id)?.abort(OPERATION_ENDED);
    reservation.operations.delete(id);
    return EMPTY(200);
  };

  /**
   * Starts one operation on the reservation's stream: its answer (202, or why not), and what
   * then delivers its results through the stream's writer, to call once the answer is out.
   */
  const start = async (
    reservation: Reservation,
    admitted: Admitted,
    params: OperationParams,
    req: IncomingMessage,
    summary: RequestSummary,
  ): Promise<{ answer: RelayAnswer; deliver?: () => Promise<void> }> => {
    const extensions = (params.extensions ?? {}) as Record<string, unknown>;
    const id = extensions.operationId;
    if (typeof id !== 'string' || id === '' || id.length > 128) {
      return {
        answer: refusal({
          errors: [requestError('operationId is missing.', 'BAD_USER_INPUT', 400)],
        }),
      };
    }
    if (reservation.operations.has(id)) {
      return {
        answer: refusal({
          errors: [requestError('An operation with this id is running.', 'BAD_USER_INPUT', 409)],
        }),
      };
    }
    const stop = new AbortController();
    reservation.operations.set(id, stop);
    const outcome = await entry.operate({
      admitted,
      params,
      method: 'POST',
      req,
      summary,
      end: stopEnd(stop),
      parts: true,
    });
    const finished = () => {
      if (reservation.operations.get(id) === stop) reservation.operations.delete(id);
    };
    if (outcome.kind === 'result' && statusOf(outcome.result) >= 400) {
      finished();
      return { answer: refusal(outcome.result) };
    }
    if (stop.signal.aborted || reservation.operations.get(id) !== stop) {
      // Stopped (DELETE, the stream closed) while it was being prepared.
      if (outcome.kind === 'stream') void outcome.stream.return();
      return { answer: EMPTY(204) };
    }
    const deliver = async (): Promise<void> => {
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
    return { answer: EMPTY(202), deliver };
  };

  /** A request relayed by another replica for a stream held here. */
  const serveRelayed = async (
    reservation: Reservation,
    request: RelayRequest,
  ): Promise<RelayAnswer> => {
    // The token is identified here too: the caller must be the reservation's, now.
    const admitted = await entry.identify(request.authorization);
    if (admitted instanceof GatewayError) return refusal({ errors: [admitted] });
    const { req } = reservation;
    if (
      admitted.caller !== reservation.caller ||
      !req ||
      reservations.get(reservation.token) !== reservation
    ) {
      return NOT_RESERVED();
    }
    if (request.kind === 'stop') return stopOperation(reservation, request.operationId);
    const summary: RequestSummary = { id: request.requestId, codes: [] };
    const { answer, deliver } = await start(
      reservation,
      admitted,
      request.params as OperationParams,
      req,
      summary,
    );
    if (deliver) setImmediate(() => void deliver());
    return {
      ...answer,
      codes: [...new Set([...answer.codes, ...summary.codes])],
      ...(summary.operation !== undefined && { operation: summary.operation }),
      ...(summary.operationType !== undefined && { operationType: summary.operationType }),
    };
  };

  /** DELETE or an operation's POST for a reservation of this replica's. */
  const serveHere = async (reservation: Reservation, request: SseRequest): Promise<void> => {
    const { req, res, admitted, summary } = request;
    const asked = await readRequest(req, res);
    if (asked?.kind === 'stop') send(res, stopOperation(reservation, asked.operationId));
    else if (asked) {
      const { answer, deliver } = await start(reservation, admitted, asked.params, req, summary);
      send(res, answer);
      await deliver?.();
    }
  };

  /** DELETE or an operation's POST for a stream another replica holds: relayed to it. */
  const relay = async (token: string, holder: string, request: SseRequest): Promise<void> => {
    const { req, res, summary } = request;
    const asked = await readRequest(req, res);
    if (!asked) return;
    const authorization = req.headers.authorization ?? '';
    const relayed: RelayRequest =
      asked.kind === 'stop'
        ? { ...asked, authorization, requestId: summary.id }
        : {
            kind: 'operate',
            authorization,
            params: { ...asked.params } as Record<string, unknown>,
            requestId: summary.id,
          };
    const answer = await store.ask(token, holder, relayed, relayTimeoutMs);
    if (answer === 'gone') {
      send(res, NOT_RESERVED());
      return;
    }
    if (answer === 'timeout') {
      send(
        res,
        refusal({
          errors: [
            requestError(
              'The replica holding this stream did not answer in time; retry.',
              'INTERNAL_SERVER_ERROR',
              503,
              { 'Retry-After': '1' },
            ),
          ],
        }),
      );
      return;
    }
    summary.codes.push(...answer.codes);
    // The request's log line and metrics name the operation, as for one run here.
    summary.operation = answer.operation;
    summary.operationType = answer.operationType;
    summary.caller = request.admitted.caller;
    summary.business = request.admitted.business.id;
    send(res, answer);
  };

  const single = async (request: SseRequest): Promise<void> => {
    const { req, res, admitted } = request;
    if (req.method === 'PUT') {
      await reserve(request);
      return;
    }
    const token = tokenOf(req);
    const local = token === undefined ? undefined : reservations.get(token);
    if (token === undefined || (local && local.caller !== admitted.caller)) {
      send(res, NOT_RESERVED());
      return;
    }
    if (local && opensStream(req)) return connect(local, request);
    if (local && (local.stream || !store.shared)) return serveHere(local, request);
    const shared = await store.find(token);
    if (!shared || shared.caller !== admitted.caller) {
      send(res, NOT_RESERVED());
      return;
    }
    if (opensStream(req)) {
      // Reserved on another replica: its stream opens here, on a slot of this replica's.
      const release = slots.take(admitted.caller);
      if (!release) {
        send(res, tooMany());
        return;
      }
      return connect(track(token, admitted, release), request);
    }
    // Held here once, but no more (its end could not be recorded in Redis): gone.
    if (shared.holder === store.replica) {
      send(res, NOT_RESERVED());
      return;
    }
    if (shared.holder === undefined) {
      send(
        res,
        refusal({
          errors: [
            requestError(
              'The event stream of this reservation is not open yet: open it before sending operations.',
              'BAD_USER_INPUT',
              409,
            ),
          ],
        }),
      );
      return;
    }
    return relay(token, shared.holder, request);
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
      store.close();
    },
  };
}

export type SseTransport = ReturnType<typeof createSseTransport>;
