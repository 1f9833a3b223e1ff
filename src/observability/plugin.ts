/**
 * Collects what a request did (operation name, error codes) into the request's summary, which
 * the HTTP layer turns into one log line and metrics when the response ends: the operation's
 * name and type from the envelop plugin below, the error codes from the operation entry
 * ({@link addErrorCodes}).
 */
import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** One request, as logged. Filled while the operation runs. */
export interface RequestSummary {
  id: string;
  operation?: string | undefined;
  /** query, mutation or subscription, once the document validated. */
  operationType?: string | undefined;
  /** Who sent it (`sub:…` or `ip:…`), for the metric's operation label (never logged). */
  caller?: string | undefined;
  /** The business it belongs to, once the operation entry admitted it (its token's). */
  business?: string | undefined;
  codes: string[];
}

/** Adds the error codes of a result that goes out to the request's summary. */
export function addErrorCodes(summary: RequestSummary, result: ExecutionResult): void {
  for (const error of result.errors ?? []) {
    const code = error.extensions?.code;
    summary.codes.push(typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR');
  }
}

function nameOperation(
  context: unknown,
  document: DocumentNode,
  operationName: string | null | undefined,
): void {
  const summary = (context as { summary?: RequestSummary }).summary;
  if (!summary) return;
  const operation = getOperationAST(document, operationName);
  summary.operation = operation?.name?.value;
  summary.operationType = operation?.operation;
  const { caller } = context as { caller?: unknown };
  if (typeof caller === 'string') summary.caller = caller;
}

/** The envelop plugin that names the operation; the server context carries `summary`. */
export function useRequestSummary(): Plugin<object, { summary?: RequestSummary }> {
  return {
    // The name in the document once it validated: a name sent with a request that fails
    // earlier is any string a caller likes, and would fill the metric's label slots.
    onExecute({ args }) {
      nameOperation(args.contextValue, args.document, args.operationName);
    },
    onSubscribe({ args }) {
      nameOperation(args.contextValue, args.document, args.operationName);
    },
  };
}
