/**
 * The fast path for the common request: a JSON POST of a query or mutation that parses and
 * validates cleanly. It runs the same parser, validation rules, cost limit, authentication,
 * rate limit, context, execution, error masking and stale extension as Yoga's pipeline, but
 * without converting the node request and response to Fetch objects, and with parse and
 * validation done once per distinct document. Measured: the Fetch conversion and its promise
 * plumbing were most of the gateway's time per request.
 *
 * Anything else — GET, subscriptions (SSE), a document that does not parse or validate, a
 * refused token or rate, CORS, an unusual Accept, `extensions` (persisted documents) — is
 * handed to Yoga, which answers it exactly as before. The fast path never answers an error
 * that Yoga would have answered differently: it steps aside before any such error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type DocumentNode,
  type ExecutionResult,
  execute,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  type OperationDefinitionNode,
  specifiedRules,
  type ValidationRule,
  validate,
} from 'graphql';
import { maskError } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { viewerKey } from '../auth/viewer.ts';
import type { GraphQLContext } from '../context.ts';
import { operationCost } from '../graphql/hardening.ts';
import type { RequestRecord } from '../observability/plugin.ts';

/** A document that parsed and validated, ready to execute. */
interface Prepared {
  document: DocumentNode;
  operations: Map<string | undefined, OperationDefinitionNode>;
}

export interface FastPathDeps {
  schema: GraphQLSchema;
  parse: (source: string) => DocumentNode;
  rules: ValidationRule[];
  maxCost: number;
  /** Documents longer than this (bytes) are Yoga's to refuse. */
  maxDocumentBytes: number;
  /** False when only trusted documents sent by id are accepted: Yoga refuses the text. */
  acceptsText: boolean;
  /** Registers a callback for every fresh write of a record (which may replace one reused). */
  onFreshWrite: (listener: () => void) => void;
  /** Most responses kept for reuse (never more than the record cache's bound). */
  maxReusable: number;
  /** Told whether a query's whole response was reused. */
  onReuse?: (outcome: 'hit' | 'miss') => void;
  /** Builds the request's context, or throws (refused token or rate: Yoga answers then). */
  context: (req: IncomingMessage) => Promise<GraphQLContext>;
}

/** Longest reuse of a response that read no record (e.g. `gatewayInfo`, `kycSdkConfig`). */
const RECORDLESS_REUSE_MS = 60_000;
/** Responses larger than this are not kept for reuse. */
const MAX_REUSED_BYTES = 64 * 1024;

/** A whole response kept for reuse by the same caller, until its records stop being fresh. */
interface ReusableResponse {
  body: string;
  until: number;
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
export function createFastPath(deps: FastPathDeps) {
  const prepared = new LRUCache<string, Prepared | false>({ max: 1000 });
  // Whole responses of queries, keyed by caller identity (everything authorization looks at),
  // document, operation and variables. Reused only until the first record they contain stops
  // being fresh, so never longer than the record cache would serve the record.
  const responses = new LRUCache<string, ReusableResponse>({ max: deps.maxReusable });
  // A mutation or a live poll wrote a fresh record: what was kept may hold the previous one.
  deps.onFreshWrite(() => responses.clear());
  const rules = [...specifiedRules, ...deps.rules];

  function prepare(query: string): Prepared | false {
    const known = prepared.get(query);
    if (known !== undefined) return known;
    let result: Prepared | false = false;
    try {
      const document = deps.parse(query);
      if (validate(deps.schema, document, rules).length === 0) {
        const operations = new Map<string | undefined, OperationDefinitionNode>();
        for (const definition of document.definitions) {
          if (definition.kind === 'OperationDefinition') {
            operations.set(definition.name?.value, definition);
          }
        }
        result = { document, operations };
      }
    } catch {
      result = false;
    }
    prepared.set(query, result);
    return result;
  }

  /**
   * Tries to answer a buffered JSON POST. Declines (without writing anything) whenever Yoga
   * should answer instead.
   */
  return async function tryFast(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    record: RequestRecord,
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
    const ready = prepare(query);
    if (!ready) return 'declined';
    const name = typeof operationName === 'string' ? operationName : undefined;
    const operation =
      name === undefined && ready.operations.size === 1
        ? ready.operations.values().next().value
        : ready.operations.get(name);
    if (!operation || operation.operation === 'subscription') return 'declined';
    const variableValues = (variables ?? {}) as Record<string, unknown>;
    if (operationCost(ready.document, name, variableValues) > deps.maxCost) return 'declined';

    let contextValue: GraphQLContext;
    try {
      contextValue = await deps.context(req);
    } catch {
      return 'declined';
    }
    const operationLabel = getOperationAST(ready.document, name)?.name?.value;
    record.operation = operationLabel;
    const reuseKey =
      operation.operation === 'query'
        ? [viewerKey(contextValue.viewer), name ?? '', JSON.stringify(variableValues), query].join(
            '\u0000',
          )
        : undefined;
    const reusable = reuseKey === undefined ? undefined : responses.get(reuseKey);
    if (reusable && reusable.until > Date.now()) {
      deps.onReuse?.('hit');
      writeJson(res, type, reusable.body);
      return 'answered';
    }
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
    const text = JSON.stringify(payload);
    if (reuseKey !== undefined) {
      deps.onReuse?.('miss');
      const until = Math.min(contextValue.freshness.until, Date.now() + RECORDLESS_REUSE_MS);
      // Only clean answers: no error, no stale copy, something fresh to reuse.
      if (!errors && stale.length === 0 && until > Date.now() && text.length <= MAX_REUSED_BYTES) {
        responses.set(reuseKey, { body: text, until });
      }
    }
    writeJson(res, type, text);
    return 'answered';
  };
}
