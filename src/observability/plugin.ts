/**
 * Collects what a request did (operation name, error codes) into the request's record, which
 * the HTTP layer turns into one log line and metrics when the response ends.
 */
import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** One request, as logged. Filled by the plugin while Yoga serves it. */
export interface RequestRecord {
  id: string;
  operation?: string | undefined;
  /** query, mutation or subscription, once the document validated. */
  operationType?: string | undefined;
  codes: string[];
}

/** Adds the error codes of a result that goes out to the request's record. */
export function recordCodes(record: RequestRecord, result: ExecutionResult): void {
  for (const error of result.errors ?? []) {
    const code = error.extensions?.code;
    record.codes.push(typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR');
  }
}

function isExecutionResult(value: unknown): value is ExecutionResult {
  return typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
}

function nameOperation(
  context: unknown,
  document: DocumentNode,
  operationName: string | null | undefined,
): void {
  const record = (context as { record?: RequestRecord }).record;
  if (!record) return;
  const operation = getOperationAST(document, operationName);
  record.operation = operation?.name?.value;
  record.operationType = operation?.operation;
}

/** The Yoga plugin; the server context carries `record`. */
export function useRequestRecord(): Plugin<object, { record?: RequestRecord }> {
  return {
    // The name in the document once it validated: a name sent with a request that fails
    // earlier is any string a caller likes, and would fill the metric's label slots.
    onExecute({ args }) {
      nameOperation(args.contextValue, args.document, args.operationName);
    },
    onSubscribe({ args }) {
      nameOperation(args.contextValue, args.document, args.operationName);
    },
    onResultProcess({ result, serverContext }) {
      const record = serverContext.record;
      if (!record) return;
      const results = Array.isArray(result) ? result : [result];
      for (const item of results) if (isExecutionResult(item)) recordCodes(record, item);
    },
  };
}
