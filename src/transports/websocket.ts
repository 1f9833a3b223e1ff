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
 * every other transport. This file only frames.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ExecutionArgs, type ExecutionResult, GraphQLError, parse } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { type Extra, useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { GatewayError } from '../errors.ts';
import type { RequestSummary } from '../observability/plugin.ts';
import type { ConnectionSlots } from './connections.ts';
import { statusOf } from './io.ts';
import {
  type Admitted,
  type OperationEntry,
  type OperationOutcome,
  publicError,
  publicResult,
} from './operation.ts';

/** Close codes of this adapter (docs/api.md). */
export const CLOSE_TOKEN_REFUSED_OR_EXPIRED = CloseCode.Forbidden; // 4403
export const CLOSE_TOO_MANY_CONNECTIONS = 4429;

export interface WebSocketDeps {
  path: string;
  /** Largest message accepted (bytes): the body limit of the HTTP transports. */
  maxPayload: number;
  entry: OperationEntry;
  slots: ConnectionSlots;
  /** A summary for one operation (its log line and metrics). */
  summary: () => RequestSummary;
}

/** What a connection keeps once its token was accepted. */
type Connection = { admitted?: Admitted; closeTimers?: () => void } & Record<PropertyKey, unknown>;

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

/**
 * Serves the protocol on `server`'s upgrades of `path`; other paths are refused, and upgrades to
 * anything but `websocket` never reach here (server.ts serves those requests over HTTP/1.1).
 * Returns the function that closes every connection (shutdown).
 */
export function attachWebSocket(server: Server, deps: WebSocketDeps): () => Promise<void> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.maxPayload });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== deps.path) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  const carried = (args: ExecutionArgs): OperationOutcome => (args.contextValue as Carried).outcome;

  const disposable = useServer<Record<string, unknown>, Connection>(
    {
      // A connection that does not present its token soon is closed.
      connectionInitWaitTimeout: 3000,
      onConnect: async (ctx) => {
        const extra = ctx.extra as Extra & Connection;
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
        return true;
      },
      onSubscribe: async (ctx, _id, payload) => {
        const admitted = (ctx.extra as Extra & Connection).admitted;
        if (admitted === undefined) return [];
        const outcome = await deps.entry.operate({
          admitted,
          params: payload,
          method: 'POST',
          req: ctx.extra.request,
          summary: deps.summary(),
          signal: new AbortController().signal,
          charge: true,
        });
        // Refused before execution: the protocol's `error` message.
        if (outcome.kind === 'result' && statusOf(outcome.result) >= 400) {
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
    },
    wss,
  );

  return async () => {
    for (const client of wss.clients) client.close(1001, 'Going away');
    await disposable.dispose();
  };
}
