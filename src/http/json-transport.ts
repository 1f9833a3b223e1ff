/**
 * The JSON transport: a buffered `POST /graphql` with a JSON body of `query`, `variables` and
 * `operationName`, served from node:http without converting the request and the response to
 * Fetch objects (that conversion was most of the time per request under Yoga's handler).
 *
 * It holds no GraphQL logic of its own: parse, validation, context, execution and every plugin
 * on them come from Yoga's envelop pipeline (`yoga.getEnveloped`), and the answer from the one
 * answer format (./answer.ts) that Yoga's own answers use too. It declines — leaving the
 * request to Yoga's handler, which serves GET, streams, persisted documents, forms and
 * everything unusual — before it has done any work that Yoga would repeat.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
} from 'graphql';
import { maskError } from 'graphql-yoga';
import { type AnswerType, answerOf, negotiate } from './answer.ts';

/** What `yoga.getEnveloped(context)` gives (the parts a transport uses). */
export interface Enveloped {
  schema: GraphQLSchema;
  parse: (source: string) => DocumentNode;
  validate: (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[];
  contextFactory: () => unknown;
  execute: (args: ExecutionArgs) => unknown;
}

export interface JsonTransportDeps<S> {
  /** The pipeline for one request, given the request's initial context. */
  getEnveloped: (server: S) => Enveloped;
  /** The result as it goes out: error codes checked, recorded for the log line and metrics. */
  finish: (result: ExecutionResult, server: S) => ExecutionResult;
}

/** What the transport did with a request. */
export type TransportOutcome = 'answered' | 'declined';

const JSON_BODY = /^application\/json\s*(;|$)/i;

/**
 * A client that takes an answer in parts (SSE, or `multipart/mixed`: Apollo Client's `@defer`)
 * is Yoga's, whose answer streams each part as it exists; decided from the headers, before the
 * body is read, since a declined body's answer would be buffered.
 */
const STREAM_TYPES = /text\/event-stream|multipart\/mixed/i;

/** The media type this transport would answer with, or undefined when it leaves it to Yoga. */
export function jsonAnswerType(req: IncomingMessage): AnswerType | undefined {
  if (req.method !== 'POST' || !JSON_BODY.test(req.headers['content-type'] ?? '')) return;
  if (STREAM_TYPES.test(req.headers.accept ?? '')) return;
  return negotiate(req.headers.accept);
}

/** Plain parameters, or undefined for anything Yoga's handler should read itself. */
function plainParams(
  body: string,
): { query: string; variables: Record<string, unknown>; operationName?: string } | undefined {
  let params: unknown;
  try {
    params = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  const { query, variables, operationName, ...rest } = params as Record<string, unknown>;
  // An empty query is a request without one, which Yoga's handler answers.
  if (typeof query !== 'string' || query === '' || Object.keys(rest).length > 0) return undefined;
  if (variables !== undefined && variables !== null) {
    if (typeof variables !== 'object' || Array.isArray(variables)) return undefined;
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    return undefined;
  }
  return {
    query,
    variables: (variables ?? {}) as Record<string, unknown>,
    ...(typeof operationName === 'string' && { operationName }),
  };
}

/** An error thrown by a step, as Yoga would report it: GraphQL errors as they are, others masked. */
function reported(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  const masked = maskError(error, 'Unexpected error.', false);
  return masked instanceof GraphQLError ? masked : new GraphQLError('Unexpected error.');
}

/** Builds the transport over Yoga's pipeline. */
export function createJsonTransport<S>(deps: JsonTransportDeps<S>) {
  const write = (res: ServerResponse, type: AnswerType, result: ExecutionResult, server: S) => {
    const { status, headers, body } = answerOf(deps.finish(result, server), type);
    res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };

  return async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    server: S,
  ): Promise<TransportOutcome> {
    const type = jsonAnswerType(req);
    const params = type === undefined ? undefined : plainParams(body);
    if (type === undefined || params === undefined) return 'declined';
    const pipeline = deps.getEnveloped(server);
    let document: DocumentNode;
    try {
      document = pipeline.parse(params.query);
    } catch (error) {
      write(res, type, { errors: [reported(error)] }, server);
      return 'answered';
    }
    const operation = getOperationAST(document, params.operationName);
    if (!operation) {
      // As Yoga's handler answers it (a request error: 400 under graphql-response+json).
      const unresolved = new GraphQLError('Could not determine what operation to execute.', {
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } },
      });
      write(res, type, { errors: [unresolved] }, server);
      return 'answered';
    }
    // Subscriptions are streams: Yoga's (its document preparation is reused, not repeated).
    if (operation.operation === 'subscription') return 'declined';
    const errors = pipeline.validate(pipeline.schema, document);
    if (errors.length > 0) {
      write(res, type, { errors }, server);
      return 'answered';
    }
    let result: ExecutionResult;
    try {
      const contextValue = await pipeline.contextFactory();
      result = (await pipeline.execute({
        schema: pipeline.schema,
        document,
        contextValue,
        variableValues: params.variables,
        operationName: params.operationName ?? null,
      })) as ExecutionResult;
    } catch (error) {
      result = { errors: [reported(error)] };
    }
    write(res, type, result, server);
    return 'answered';
  };
}
