/**
 * The one operation entry every transport calls (docs/architecture.md, "One operation entry").
 * An adapter (http.ts with json.ts and multipart.ts, sse.ts, websocket.ts) reads an operation in its protocol and calls {@link OperationEntry.operate}, which
 * runs every check in one order:
 *
 *   identify (with expiry) → rate → persisted / trusted documents → prepare (parse + validate +
 *   limits) → access rules (resolvers) → execute or subscribe → masking and contract codes.
 *
 * It never throws and never hands out a stream that can reject: an error anywhere, the token's
 * expiry or the client going away becomes the last result of the stream, which then ends and
 * frees what it held (poller, live slot). The adapter only frames results.
 */
import type { IncomingMessage } from 'node:http';
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
} from 'graphql';
import { isAsyncIterable, maskError } from 'graphql-yoga';
import type { Authenticator, Viewer } from '../auth.ts';
import type { Business } from '../businesses/registry.ts';
import {
  GatewayError,
  publicError,
  RateLimitedError,
  requestError,
  UnauthenticatedError,
} from '../errors.ts';
import { withContractCodes } from '../graphql/hardening.ts';
import type { DocumentResolver } from '../graphql/persisted.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import { addErrorCodes, type RequestSummary } from '../observability/plugin.ts';
import type { Waiting } from '../upstream/http.ts';

/** A caller the entry let in. */
export interface Admitted {
  viewer: Viewer;
  /** The business the request belongs to: everything it reads and keeps is that business's. */
  business: Business;
  /**
   * Key of per-caller limits: `sub:<subject>`, or `tok:<the token's identity>` without `sub`;
   * with several businesses, under the business's id (`biz:<id>:sub:<subject>`).
   */
  caller: string;
  /** When the token expires (epoch ms); Infinity when checking is off. */
  expiresAt: number;
}

/** An operation as a transport read it (GraphQL over HTTP's parameters). */
export interface OperationParams {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
  extensions?: unknown;
  documentId?: unknown;
}

/** The envelop pipeline of one operation (`yoga.getEnveloped(context)`). */
export interface Enveloped {
  schema: GraphQLSchema;
  parse: (source: string) => DocumentNode;
  validate: (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[];
  contextFactory: () => unknown;
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

/** What the server context of one operation holds (the pipeline's context factory reads it). */
export interface OperationContext {
  req: IncomingMessage;
  summary: RequestSummary;
  viewer: Viewer;
  business: Business;
  caller: string;
  /**
   * The end of the operation (client gone, token expired, stream returned): looked at (`gone`),
   * or listened to (`abandoned`, a signal made on the first call: call it only when something
   * must listen). Functions rather than getters: a getter in an object literal made per
   * operation gives each object a hidden class of its own, which kept every operation's objects
   * alive until the next full collection of the heap.
   */
  readonly operationEnd: Waiting;
  /** Whether the transport sends an incremental answer in parts (see {@link OperationInput}). */
  parts: boolean;
}

/** One result now, or a stream of results that always ends cleanly. */
export type OperationOutcome =
  | { kind: 'result'; result: ExecutionResult }
  | { kind: 'stream'; stream: AsyncGenerator<ExecutionResult, void, undefined> };

export interface OperationInput {
  admitted: Admitted;
  params: OperationParams;
  /** `GET` runs queries only (GraphQL over HTTP); a transport that allows more says `POST`. */
  method: 'GET' | 'POST';
  req: IncomingMessage;
  summary: RequestSummary;
  /**
   * The client's end: looked at when an upstream call has to wait, listened to (its signal,
   * which a transport may make on first use) only when something must be told (a stream, a
   * retry's sleep).
   */
  end: Waiting;
  /** Charge the caller's rate here (operations on a connection that was admitted once). */
  charge?: boolean;
  /**
   * The transport frames an answer in parts (multipart, SSE): `@defer` and `@stream` send each
   * part as it exists. Otherwise (JSON, WebSocket) the parts are merged into one answer.
   */
  parts?: boolean;
}

export interface OperationEntryDeps {
  authenticate: Authenticator;
  /** The business a verified token belongs to (its claim), or undefined when none is served. */
  businesses: { several: boolean; resolve(claim: string | undefined): Business | undefined };
  rateLimiter: RateLimiter;
  /** Persisted and trusted documents (src/graphql/persisted.ts). */
  documents: DocumentResolver;
  /** The pipeline of one operation, given its server context. */
  getEnveloped: (context: OperationContext) => Enveloped;
  /** Production: no internal detail in any answer. */
  production: boolean;
}

export interface OperationEntry {
  /** The token, then the caller's rate: the caller, or why not. */
  admit(authorization: string | null): Promise<GatewayError | Admitted>;
  /** The token alone (a connection's opening). */
  identify(authorization: string | null): Promise<GatewayError | Admitted>;
  /** One operation on the caller's rate. */
  charge(admitted: Admitted): Promise<GatewayError | undefined>;
  /** Runs one operation through every step; never throws. */
  operate(input: OperationInput): Promise<OperationOutcome>;
  /**
   * Shutdown: ends every stream running now and every stream started from now on, without a
   * last result, so that each adapter closes it as its protocol ends a stream (SSE `complete`,
   * multipart's closing boundary, graphql-ws `complete`).
   */
  endStreams(): void;
}

/**
 * The reason every operation's signal aborts with. `abort()` without a reason builds a new
 * DOMException, stack trace included, each time: two per request, 6 % of a cache miss's CPU in the
 * profile. One shared reason costs nothing; it is still an `AbortError`.
 */
export const OPERATION_ENDED = new DOMException('The operation has ended.', 'AbortError');

/** Why a request of a business no longer served (removed by a reload) gets nothing. */
const NOT_SERVED = 'The business of this token is no longer served by this gateway.';

/** An error thrown by a step: GraphQL errors as they are, anything else masked. */
export function reported(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  const masked = maskError(error, 'Unexpected error.', false);
  return masked instanceof GraphQLError
    ? masked
    : new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
}

/**
 * A result as it travels inside a stream frame (SSE event, multipart part, WebSocket message):
 * plain JSON, errors with message, locations, path and their public extensions only.
 */
export function publicResult(result: ExecutionResult): Record<string, unknown> {
  const { errors, extensions, ...rest } = result;
  const { http: _http, ...shownExtensions } = (extensions ?? {}) as Record<string, unknown>;
  return {
    ...(errors && { errors: errors.map(publicError) }),
    ...rest,
    ...(Object.keys(shownExtensions).length > 0 && { extensions: shownExtensions }),
  };
}

/** Resolves at `at` (epoch ms), or never for Infinity; `cancel` frees the timer. */
function alarm(at: number): { fired: Promise<'expired'>; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fired = new Promise<'expired'>((resolve) => {
    if (!Number.isFinite(at)) return;
    const arm = () => {
      const left = at - Date.now();
      if (left <= 0) resolve('expired');
      else timer = setTimeout(arm, Math.min(left, 2 ** 31 - 1));
    };
    arm();
  });
  return { fired, cancel: () => clearTimeout(timer) };
}

/** Builds the entry over the pipeline. */
export function createOperationEntry(deps: OperationEntryDeps): OperationEntry {
  /** The stops of the streams running now; once ending, every new stream stops at once. */
  const running = new Set<AbortController>();
  let ending = false;
  const identify = async (authorization: string | null): Promise<GatewayError | Admitted> => {
    let viewer: Viewer;
    try {
      viewer = await deps.authenticate(authorization);
    } catch (error) {
      if (error instanceof UnauthenticatedError) return error;
      throw error;
    }
    // Before anything else: a request of no business served here reads and costs nothing.
    const business = deps.businesses.resolve(viewer.business);
    if (business === undefined) {
      return new UnauthenticatedError(
        viewer.business === undefined
          ? 'The token names no business.'
          : 'The token names a business this gateway does not serve.',
      );
    }
    // The verified token's identity, never the text of the header that carried it.
    const own = viewer.subject ? `sub:${viewer.subject}` : `tok:${viewer.tokenId ?? 'none'}`;
    const caller = deps.businesses.several ? `biz:${business.id}:${own}` : own;
    return { viewer, business, caller, expiresAt: viewer.expiresAt ?? Number.POSITIVE_INFINITY };
  };

  const charge = async ({ viewer, caller }: Admitted): Promise<GatewayError | undefined> => {
    const kind = viewer.scopes.size > 0 ? 'service' : 'endUser';
    const decision = await deps.rateLimiter.take(caller, kind);
    return decision.allowed ? undefined : new RateLimitedError(decision.retryAfterSeconds);
  };

  const admit = async (authorization: string | null): Promise<GatewayError | Admitted> => {
    const admitted = await identify(authorization);
    if (admitted instanceof GatewayError) return admitted;
    return (await charge(admitted)) ?? admitted;
  };

  /** Contract codes, recorded in the request's summary: every result that goes out. */
  const finish = (result: ExecutionResult, summary: RequestSummary): ExecutionResult => {
    const final = withContractCodes(result);
    addErrorCodes(summary, final);
    return final;
  };

  const single = (result: ExecutionResult, summary: RequestSummary): OperationOutcome => ({
    kind: 'result',
    result: finish(result, summary),
  });

  /**
   * The stream as transports receive it: coded results; an error, the token's expiry or the
   * end of the client all end it with (at most) one last result; never a rejection.
   */
  async function* guarded(
    source: AsyncIterable<ExecutionResult>,
    input: OperationInput,
    stop: AbortController,
  ): AsyncGenerator<ExecutionResult, void, undefined> {
    const iterator = source[Symbol.asyncIterator]();
    const expiry = alarm(input.admitted.expiresAt);
    // A business no longer served (a reload removed it) ends its streams.
    const { removed } = input.admitted.business;
    let onRemoved: (() => void) | undefined;
    const gone = new Promise<'removed'>((resolve) => {
      if (removed.aborted) return resolve('removed');
      onRemoved = () => resolve('removed');
      removed.addEventListener('abort', onRemoved, { once: true });
    });
    const stopped = new Promise<'stopped'>((resolve) => {
      if (stop.signal.aborted) resolve('stopped');
      stop.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
    });
    try {
      for (;;) {
        const pending = iterator.next();
        // A step that settles after the stream ended must not become an unhandled rejection.
        pending.catch(() => {});
        const next = await Promise.race([pending, expiry.fired, stopped, gone]);
        if (next === 'stopped') return;
        if (next === 'removed') {
          yield finish({ errors: [new UnauthenticatedError(NOT_SERVED)] }, input.summary);
          return;
        }
        if (next === 'expired') {
          yield finish(
            { errors: [new UnauthenticatedError('The token has expired.')] },
            input.summary,
          );
          return;
        }
        if (next.done) return;
        yield finish(next.value, input.summary);
      }
    } catch (error) {
      yield finish({ errors: [reported(error)] }, input.summary);
    } finally {
      expiry.cancel();
      if (onRemoved) removed.removeEventListener('abort', onRemoved);
      stop.abort(OPERATION_ENDED);
      // Not awaited: the source ends once its signal has aborted.
      Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => {});
    }
  }

  /**
   * The stop of one operation, made on first use: a query answered at once, with nothing that
   * asked for its signal, makes no controller and aborts nothing (two abort events per request
   * showed in profiles). Once the operation has ended, a stop asked for is already aborted.
   */
  function stopOf(input: OperationInput): {
    get(): AbortController;
    gone(): boolean;
    end(): void;
  } {
    let stop: AbortController | undefined;
    let ended = false;
    const get = (): AbortController => {
      if (stop) return stop;
      const made = new AbortController();
      stop = made;
      const outer = input.end.abandoned();
      if (ended || outer.aborted) made.abort(OPERATION_ENDED);
      else {
        const forward = () => made.abort(OPERATION_ENDED);
        outer.addEventListener('abort', forward, { once: true });
        made.signal.addEventListener('abort', () => outer.removeEventListener('abort', forward), {
          once: true,
        });
      }
      return made;
    };
    return {
      get,
      // Looked at without making the stop: ended here, or its client gone.
      gone: () => ended || stop?.signal.aborted === true || input.end.gone(),
      end() {
        ended = true;
        stop?.abort(OPERATION_ENDED);
      },
    };
  }

  const operate = async (input: OperationInput): Promise<OperationOutcome> => {
    const { admitted, summary } = input;
    const stopper = stopOf(input);
    let handedOver = false;
    // The request's log line and metrics name its business (when several are served).
    summary.business = admitted.business.id;
    try {
      if (admitted.expiresAt <= Date.now()) {
        return single({ errors: [new UnauthenticatedError('The token has expired.')] }, summary);
      }
      if (admitted.business.removed.aborted) {
        return single({ errors: [new UnauthenticatedError(NOT_SERVED)] }, summary);
      }
      if (input.charge) {
        const refused = await charge(admitted);
        if (refused) return single({ errors: [refused] }, summary);
      }
      const params = await deps.documents(input.params, admitted.caller);
      const { query, variables, operationName } = params;
      if (typeof query !== 'string' || query === '') {
        throw requestError(
          'The request has no query and no document id.',
          'GRAPHQL_PARSE_FAILED',
          400,
        );
      }
      if (
        variables !== undefined &&
        variables !== null &&
        (typeof variables !== 'object' || Array.isArray(variables))
      ) {
        throw requestError('Variables must be an object.', 'GRAPHQL_PARSE_FAILED', 400);
      }
      if (
        operationName !== undefined &&
        operationName !== null &&
        typeof operationName !== 'string'
      ) {
        throw requestError('operationName must be a string.', 'GRAPHQL_PARSE_FAILED', 400);
      }
      const context: OperationContext = {
        req: input.req,
        summary,
        viewer: admitted.viewer,
        business: admitted.business,
        caller: admitted.caller,
        operationEnd: { gone: stopper.gone, abandoned: () => stopper.get().signal },
        parts: input.parts === true,
      };
      const pipeline = deps.getEnveloped(context);
      const document = pipeline.parse(query);
      const operation = getOperationAST(document, operationName ?? undefined);
      if (!operation) {
        throw requestError(
          'Could not determine what operation to execute.',
          'GRAPHQL_VALIDATION_FAILED',
          400,
        );
      }
      if (input.method === 'GET' && operation.operation !== 'query') {
        throw requestError(
          'Can only perform a query operation from a GET request.',
          'GRAPHQL_VALIDATION_FAILED',
          405,
          { allow: 'POST' },
        );
      }
      const errors = pipeline.validate(pipeline.schema, document);
      if (errors.length > 0) return single({ errors }, summary);
      const args: ExecutionArgs = {
        schema: pipeline.schema,
        document,
        contextValue: await pipeline.contextFactory(),
        variableValues: (variables ?? {}) as Record<string, unknown>,
        operationName: operationName ?? null,
      };
      const run = operation.operation === 'subscription' ? pipeline.subscribe : pipeline.execute;
      const result = (await run(args)) as ExecutionResult | AsyncIterable<ExecutionResult>;
      if (!isAsyncIterable(result)) return single(result, summary);
      handedOver = true;
      const stop = stopper.get();
      if (ending) stop.abort(OPERATION_ENDED);
      running.add(stop);
      stop.signal.addEventListener('abort', () => running.delete(stop), { once: true });
      const stream = guarded(result, input, stop);
      // Returning the stream (client gone, `complete`, DELETE) stops it at once, even while it
      // waits for the source's next result.
      const end = stream.return.bind(stream);
      stream.return = (value) => {
        stop.abort(OPERATION_ENDED);
        return end(value);
      };
      return { kind: 'stream', stream };
    } catch (error) {
      return single({ errors: [reported(error)] }, summary);
    } finally {
      if (!handedOver) stopper.end();
    }
  };

  const endStreams = (): void => {
    ending = true;
    for (const stop of [...running]) stop.abort(OPERATION_ENDED);
  };

  return { admit, identify, charge, operate, endStreams };
}
