/**
 * The WebSocket adapter: `/graphql` over the `graphql-transport-ws` protocol (the graphql-ws
 * library's server on `ws`), for clients that subscribe that way (Apollo Client's and urql's
 * `graphql-ws` links, mobile clients).
 *
 * The token (`connectionParams.authorization`) is identified once, at `connection_init`; a bad
 * one closes 4403. The connection takes one of the caller's connection slots (shared with
 * graphql-sse reservations; none left: close 4429) and is closed 4403 when its token expires.
 * Each operation runs through the operation entry (its rate charged there too): a refusal before
 * execution is an `error` message, every result a `next` message with the same public errors as
 * every other transport. This file only frames. An operation's signal aborts when the socket
 * closes or the client sends `complete` for it, as an HTTP request's does when its client leaves.
 *
 * The protocol is graphql-ws's own server (`makeServer`) on a `ws` socket bound here rather than
 * with its `useServer`: every message goes out through the stream writer (writer.ts), so what
 * waits to be written to one socket is bounded (past it, or stalled: close 1008), and errors of
 * the socket or of a message go to the gateway's log (one line, throttled), not to stderr. Each
 * operation is logged and counted as an HTTP request is, once it has completed.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ExecutionArgs, type ExecutionResult, GraphQLError, parse } from 'graphql';
import { CloseCode, type Context, handleProtocols, makeServer } from 'graphql-ws';
import { type WebSocket, WebSocketServer } from 'ws';
import { GatewayError, publicError } from '../errors.ts';
import type { RequestSummary } from '../observability/plugin.ts';
import { withRequestId } from '../observability/request-context.ts';
import type { ThrottledWarn } from '../observability/throttled-log.ts';
import type { ConnectionSlots } from './connections.ts';
import { type StreamDeps, statusOf, stopEnd } from './io.ts';
import {
  type Admitted,
  OPERATION_ENDED,
  type OperationEntry,
  type OperationOutcome,
  publicResult,
} from './operation.ts';
import { StreamWriter } from './writer.ts';

/** Close codes of this adapter (docs/api.md). */
export const CLOSE_TOKEN_REFUSED_OR_EXPIRED = CloseCode.Forbidden; // 4403
export const CLOSE_TOO_MANY_CONNECTIONS = 4429;
/** A client that does not read what it is sent (policy violation). */
export const CLOSE_NOT_READING = 1008;
/** How often an idle connection is pinged; one that does not answer within as long is dropped. */
const KEEP_ALIVE_MS = 12_000;

export interface WebSocketDeps {
  path: string;
  /** Largest message accepted (bytes): the body limit of the HTTP transports. */
  maxPayload: number;
  entry: OperationEntry;
  slots: ConnectionSlots;
  streams: StreamDeps;
  /** A summary for one operation (its log line and metrics). */
  summary: () => RequestSummary;
  /** Logs and counts one operation once it has completed (`status`: its HTTP equivalent). */
  finished: (summary: RequestSummary, started: number, status: number) => void;
  /** Errors of sockets and messages: logged, throttled. */
  warn: ThrottledWarn;
}

/** What graphql-ws's context carries for one connection. */
interface Extra {
  socket: WebSocket;
  request: IncomingMessage;
  writer: StreamWriter;
  admitted?: Admitted;
  /** graphql-ws's context of the connection, once it is acknowledged. */
  context?: Context<Record<string, unknown>, Extra>;
  /**
   * The operations running, by id: their summary and start (for the log line), and what aborts
   * their signal (the socket closed, or the client sent `complete` for the id).
   */
  running: Map<string, RunningOperation>;
}

interface RunningOperation {
  summary: RequestSummary;
  started: number;
  status: number;
  stop: AbortController;
}

/** The outcome an operation's arguments carry to graphql-ws's execute and subscribe. */
interface Carried {
  outcome: OperationOutcome;
}

/** Documents that only tell graphql-ws which of execute or subscribe to call. */
const AS_RESULT = parse('query { __typename }');
const AS_STREAM = parse('subscription { __typename }');

/** `Bearer …` from `connectionParams.authorization` (or `Authorization`), else null. */
function authorizationOf(params: Record<string, unknown> | undefined): string | null {
  const value = params?.authorization ?? params?.Authorization;
  return typeof value === 'string' ? value : null;
}

async function* once(result: ExecutionResult): AsyncGenerator<ExecutionResult> {
  yield result;
}

/** The message of an error, never its stack. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Serves the protocol on `server`'s upgrades of `path`; other paths are refused, and upgrades to
 * anything but `websocket` never reach here (server.ts serves those requests over HTTP/1.1).
 * Returns the function that closes every connection (shutdown).
 */
export function attachWebSocket(server: Server, deps: WebSocketDeps): () => Promise<void> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.maxPayload, handleProtocols });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== deps.path) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  wss.on('error', (error) =>
    deps.warn('websocket-server', { error: messageOf(error) }, 'WebSocket server error'),
  );

  const carried = (args: ExecutionArgs): OperationOutcome => (args.contextValue as Carried).outcome;

  /** Logs and counts operation `id` once. */
  const finish = (extra: Extra, id: string): void => {
    const operation = extra.running.get(id);
    if (!operation) return;
    extra.running.delete(id);
    deps.finished(operation.summary, operation.started, operation.status);
  };

  /**
   * Aborts the signal of each operation the client has completed while it ran: graphql-ws keeps
   * the ids the client has not completed in its context's `subscriptions` (a query runs within
   * `onSubscribe` there, so no hook of graphql-ws tells of its `complete`).
   */
  const abortCompleted = (extra: Extra): void => {
    const live = extra.context?.subscriptions;
    if (!live) return;
    for (const [id, operation] of extra.running) {
      if (!(id in live)) operation.stop.abort(OPERATION_ENDED);
    }
  };

  const protocol = makeServer<Record<string, unknown>, Extra>({
    // A connection that does not present its token soon is closed.
    connectionInitWaitTimeout: 3000,
    onConnect: async (ctx) => {
      const { extra } = ctx;
      const admitted = await deps.entry.identify(authorizationOf(ctx.connectionParams));
      if (admitted instanceof GatewayError) return false;
      const release = deps.slots.take(admitted.caller);
      if (!release) {
        extra.socket.close(CLOSE_TOO_MANY_CONNECTIONS, 'Too many connections');
        return false;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arm = () => {
        const left = admitted.expiresAt - Date.now();
        if (left <= 0) extra.socket.close(CLOSE_TOKEN_REFUSED_OR_EXPIRED, 'Token expired');
        else timer = setTimeout(arm, Math.min(left, 2 ** 31 - 1));
      };
      if (Number.isFinite(admitted.expiresAt)) arm();
      extra.socket.once('close', () => {
        clearTimeout(timer);
        release();
      });
      extra.admitted = admitted;
      extra.context = ctx;
      return true;
    },
    onSubscribe: async (ctx, id, payload) => {
      const { extra } = ctx;
      const admitted = extra.admitted;
      // Nothing runs for a connection being closed (its client stopped reading).
      if (admitted === undefined || extra.writer.ended) return [];
      const summary = deps.summary();
      // Its signal aborts when the client leaves or completes it: its queued upstream calls are
      // then dropped, as for an HTTP client that disconnects.
      const stop = new AbortController();
      const record: RunningOperation = { summary, started: performance.now(), status: 200, stop };
      extra.running.set(id, record);
      // Upstream calls send the operation's id on, and log lines written meanwhile carry it.
      const outcome = await withRequestId(summary.id, () =>
        deps.entry.operate({
          admitted,
          params: payload,
          method: 'POST',
          req: extra.request,
          summary,
          end: stopEnd(stop),
          charge: true,
        }),
      );
      // Refused before execution: the protocol's `error` message.
      if (outcome.kind === 'result' && statusOf(outcome.result) >= 400) {
        record.status = statusOf(outcome.result);
        finish(extra, id);
        return (outcome.result.errors ?? []).map(
          (error) =>
            new GraphQLError(error.message, { extensions: { ...publicError(error).extensions } }),
        );
      }
      const contextValue: Carried = { outcome };
      return {
        schema: undefined as never,
        document: outcome.kind === 'stream' ? AS_STREAM : AS_RESULT,
        operationName: null,
        contextValue,
      };
    },
    execute: (args) => {
      const outcome = carried(args);
      return outcome.kind === 'result' ? outcome.result : once({});
    },
    subscribe: (args) => {
      const outcome = carried(args);
      return outcome.kind === 'stream' ? outcome.stream : once(outcome.result);
    },
    onNext: (_ctx, _id, _payload, _args, result) => publicResult(result) as ExecutionResult,
    onError: (_ctx, _id, _payload, errors) => errors.map((error) => publicError(error)),
    onComplete: (ctx, id) => finish(ctx.extra, id),
  });

  wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    socket.on('error', (error) => {
      deps.warn('websocket-socket', { error: messageOf(error) }, 'WebSocket connection error');
      socket.terminate();
    });
    const writer = new StreamWriter(
      deps.streams.limits,
      (reason) => {
        deps.streams.ended('websocket', reason);
        socket.close(CLOSE_NOT_READING, 'The client does not read its messages');
      },
      {
        send: (frame, done) => {
          if (socket.readyState !== socket.OPEN) done();
          else socket.send(frame, () => done());
        },
        closed: () => socket.readyState !== socket.OPEN,
      },
    );
    const extra: Extra = { socket, request, writer, running: new Map() };
    // An idle connection is pinged; one whose peer does not answer is dropped.
    let answered = true;
    socket.on('pong', () => {
      answered = true;
    });
    const keepAlive = setInterval(() => {
      if (!answered) {
        socket.terminate();
        return;
      }
      answered = false;
      socket.ping();
    }, KEEP_ALIVE_MS);
    const closed = protocol.opened(
      {
        protocol: socket.protocol,
        // graphql-ws awaits each message before it pulls the operation's next result.
        send: async (data) => {
          if (writer.write(data)) await writer.ready();
        },
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', (data) => {
            handle(String(data)).then(
              () => {
                if (extra.running.size > 0) abortCompleted(extra);
              },
              (error: unknown) => {
                deps.warn(
                  'websocket-message',
                  { error: messageOf(error) },
                  'WebSocket message failed',
                );
                socket.close(CloseCode.InternalServerError, 'Internal server error');
              },
            );
          }),
      },
      extra,
    );
    socket.once('close', (code, reason) => {
      clearInterval(keepAlive);
      // The client is gone: every operation still running ends (its queued calls are dropped).
      for (const operation of extra.running.values()) operation.stop.abort(OPERATION_ENDED);
      writer.close();
      closed(code, String(reason)).then(
        () => {
          for (const id of [...extra.running.keys()]) finish(extra, id);
        },
        (error: unknown) =>
          deps.warn('websocket-close', { error: messageOf(error) }, 'WebSocket cleanup failed'),
      );
    });
  });

  return async () => {
    for (const client of wss.clients) client.close(1001, 'Going away');
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  };
}
