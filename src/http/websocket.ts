/**
 * The WebSocket transport: `/graphql` over the `graphql-transport-ws` protocol (the graphql-ws
 * library's server on `ws`), for clients that subscribe that way (Apollo Client's and urql's
 * `graphql-ws` links, mobile clients).
 *
 * Like the other transports it holds no GraphQL logic: the token (from `connectionParams`) is
 * checked by the same identification as the HTTP entry, each operation is charged to the
 * caller's rate like a request, and parse, validation, context, execution and subscription come
 * from Yoga's envelop pipeline, so every limit, the live hub and the error codes are the same.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { DocumentNode, ExecutionArgs, ExecutionResult, GraphQLError } from 'graphql';
import { type Extra, useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { GatewayError } from '../errors.ts';
import type { Enveloped } from './json-transport.ts';

/** The pipeline of one operation, with subscription. */
export interface EnvelopedWithSubscribe extends Enveloped {
  subscribe: (args: ExecutionArgs) => unknown;
}

export interface WebSocketDeps<A> {
  path: string;
  /** Largest message accepted (bytes): the body limit of the HTTP transports. */
  maxPayload: number;
  /** Checks the token; the error closes the connection. */
  identify: (authorization: string | null, req: IncomingMessage) => Promise<GatewayError | A>;
  /** Charges one operation to the caller's rate. */
  charge: (admitted: A) => Promise<GatewayError | undefined>;
  /** The pipeline for one operation, given its initial context. */
  getEnveloped: (admitted: A, req: IncomingMessage) => EnvelopedWithSubscribe;
  /** Contract codes on each result that goes out. */
  finish: (result: ExecutionResult) => ExecutionResult;
}

/** What a connection keeps once its token was accepted. */
type Connection<A> = { admitted?: A } & Record<PropertyKey, unknown>;

/** The pipeline's own steps, found again by graphql-ws's execute and subscribe. */
interface Steps {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

/** `Bearer …` from `connectionParams.authorization` (or `Authorization`), else null. */
function authorizationOf(params: Record<string, unknown> | undefined): string | null {
  const value = params?.authorization ?? params?.Authorization;
  return typeof value === 'string' ? value : null;
}

/**
 * Serves the protocol on `server`'s upgrades of `path`; other upgrades are refused. Returns
 * the function that closes every connection (shutdown).
 */
export function attachWebSocket<A>(server: Server, deps: WebSocketDeps<A>): () => Promise<void> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.maxPayload });
  // Each operation's pipeline steps, by its context (graphql-ws hands the args back unchanged).
  const stepsOf = new WeakMap<object, Steps>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== deps.path) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  const step = (args: ExecutionArgs): Steps => {
    const steps = stepsOf.get(args.contextValue as object);
    if (!steps) throw new Error('an operation without its pipeline');
    return steps;
  };

  const disposable = useServer<Record<string, unknown>, Connection<A>>(
    {
      // A connection that does not present its token soon is closed.
      connectionInitWaitTimeout: 3000,
      onConnect: async (ctx) => {
        const admitted = await deps.identify(
          authorizationOf(ctx.connectionParams),
          ctx.extra.request,
        );
        if (admitted instanceof GatewayError) return false;
        (ctx.extra as Extra & Connection<A>).admitted = admitted;
        return true;
      },
      onSubscribe: async (ctx, _id, payload) => {
        const admitted = (ctx.extra as Extra & Connection<A>).admitted;
        if (admitted === undefined) return [];
        const refused = await deps.charge(admitted);
        if (refused) return [refused];
        const pipeline = deps.getEnveloped(admitted, ctx.extra.request);
        let document: DocumentNode;
        try {
          document = pipeline.parse(payload.query);
        } catch (error) {
          return [error as GraphQLError];
        }
        const errors = pipeline.validate(pipeline.schema, document);
        if (errors.length > 0) return errors;
        const contextValue = (await pipeline.contextFactory()) as object;
        stepsOf.set(contextValue, { execute: pipeline.execute, subscribe: pipeline.subscribe });
        return {
          schema: pipeline.schema,
          document,
          operationName: payload.operationName ?? null,
          variableValues: payload.variables ?? {},
          contextValue,
        };
      },
      execute: (args) => step(args).execute(args) as ExecutionResult,
      subscribe: (args) => step(args).subscribe(args) as AsyncGenerator<ExecutionResult>,
      onNext: (_ctx, _id, _payload, _args, result) => deps.finish(result),
    },
    wss,
  );

  return async () => {
    for (const client of wss.clients) client.close(1001, 'Going away');
    await disposable.dispose();
  };
}
