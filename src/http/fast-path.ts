/**
 * The fast path for the common request: a JSON POST of a query or mutation that parses and
 * validates cleanly. It runs the same parser, validation rules, cost limit, authentication,
 * rate limit, context, execution, error masking and stale extension as Yoga's pipeline, but
 * without converting the node request and response to Fetch objects. Parse and validation are
 * the shared document preparer's (src/graphql/documents.ts): when the fast path declines after
 * preparing, Yoga uses that preparation instead of doing it again. Measured: the Fetch conversion and its promise
 * plumbing were most of the gateway's time per request.
 *
 * The token and the rate were checked before the body was read (server.ts). Anything else —
 * GET, subscriptions (SSE), a document that does not parse or validate, CORS, an unusual
 * Accept, `extensions` (persisted documents) — is
 * handed to Yoga, which answers it exactly as before. The fast path never answers an error
 * that Yoga would have answered differently: it steps aside before any such error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ExecutionResult,
  execute,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
} from 'graphql';
import { maskError } from 'graphql-yoga';
import type { GraphQLContext } from '../context.ts';
import type { DocumentPreparer, PreparedSlot } from '../graphql/documents.ts';
import { operationCost } from '../graphql/hardening.ts';
import type { RequestRecord } from '../observability/plugin.ts';

export interface FastPathDeps<S> {
  schema: GraphQLSchema;
  /** Parse and validation, shared with Yoga's pipeline. */
  documents: DocumentPreparer;
  maxCost: number;
  /** Documents longer than this (bytes) are Yoga's to refuse. */
  maxDocumentBytes: number;
  /** False when only trusted documents sent by id are accepted: Yoga refuses the text. */
  acceptsText: boolean;
  /** Builds the request's context from what the HTTP entry found. */
  context: (server: S) => GraphQLContext;
}

/** What the fast path did with a request. */
export type FastOutcome = 'answered' | 'declined';

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** The media type of the answer, as Yoga would choose it, or undefined to let Yoga decide. */
export function answerType(accept: string | undefined): string | undefined {
  if (accept === undefined || accept.trim() === '' || accept.includes('*/*')) {
    return 'application/json; charset=utf-8';
  }
  const graphqlResponse = accept.indexOf('application/graphql-response+json');
  const json = accept.indexOf('application/json');
  if (graphqlResponse === -1 && json === -1) return undefined;
  if (graphqlResponse !== -1 && (json === -1 || graphqlResponse < json)) {
    return 'application/graphql-response+json; charset=utf-8';
  }
  return 'application/json; charset=utf-8';
}

/** Removes the internal error extensions (`http`, `unexpected`) that Yoga never sends. */
function publicError(error: GraphQLError): GraphQLError {
  const extensions = error.extensions;
  if (!('http' in extensions) && !('unexpected' in extensions)) return error;
  const { http: _http, unexpected: _unexpected, ...rest } = extensions;
  return new GraphQLError(error.message, {
    ...(error.nodes && { nodes: error.nodes }),
    ...(error.path && { path: error.path }),
    extensions: rest,
  });
}

function writeJson(res: ServerResponse, type: string, text: string): void {
  res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Builds the fast path's handler over the same schema, parser and rules as Yoga's. */
export function createFastPath<S extends PreparedSlot & { record: RequestRecord }>(
  deps: FastPathDeps<S>,
) {
  /**
   * Tries to answer a buffered JSON POST. Declines (without writing anything) whenever Yoga
   * should answer instead.
   */
  return async function tryFast(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    server: S,
  ): Promise<FastOutcome> {
    const type = answerType(req.headers.accept);
    if (type === undefined || !JSON_TYPE.test(req.headers['content-type'] ?? '')) return 'declined';
    let params: unknown;
    try {
      params = JSON.parse(body);
    } catch {
      return 'declined';
    }
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return 'declined';
    const { query, variables, operationName, extensions } = params as Record<string, unknown>;
    if (typeof query !== 'string' || extensions !== undefined || !deps.acceptsText)
      return 'declined';
    if (Buffer.byteLength(query) > deps.maxDocumentBytes) return 'declined';
    if (variables !== undefined && (typeof variables !== 'object' || Array.isArray(variables))) {
      return 'declined';
    }
    if (
      operationName !== undefined &&
      operationName !== null &&
      typeof operationName !== 'string'
    ) {
      return 'declined';
    }
    const ready = deps.documents.prepare(query);
    // Whatever Yoga does with this request next, it does not parse or validate it again.
    server.prepared = { source: query, result: ready };
    if (!ready.ok) return 'declined';
    const name = typeof operationName === 'string' ? operationName : undefined;
    const operation = getOperationAST(ready.document, name);
    if (!operation || operation.operation === 'subscription') return 'declined';
    const variableValues = (variables ?? {}) as Record<string, unknown>;
    if (operationCost(deps.schema, ready.document, name, variableValues) > deps.maxCost) {
      return 'declined';
    }

    const contextValue = deps.context(server);
    const { record } = server;
    record.operation = operation.name?.value;
    const result = (await execute({
      schema: deps.schema,
      document: ready.document,
      contextValue,
      variableValues,
      operationName: name,
    })) as ExecutionResult;
    // A request error (e.g. variables that do not coerce): Yoga answers those, with its status.
    if (!('data' in result)) return 'declined';

    const errors = result.errors?.map((error) => {
      const masked = maskError(error, 'Unexpected error.', false);
      return publicError(
        masked instanceof GraphQLError ? masked : new GraphQLError('Unexpected error.'),
      );
    });
    for (const error of errors ?? []) {
      const code = error.extensions.code;
      record.codes.push(typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR');
    }
    const stale = contextValue.stale;
    const payload: ExecutionResult = {
      ...(errors && { errors }),
      data: result.data,
      ...(stale.length > 0 && { extensions: { stale: { records: stale } } }),
    };
    writeJson(res, type, JSON.stringify(payload));
    return 'answered';
  };
}
