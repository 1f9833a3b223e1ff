/**
 * Collects what a request did (operation name, error codes) into the request's summary, which
 * the HTTP layer turns into one log line and metrics when the response ends: the operation's
 * name and type from the pipeline's operation plugin ({@link nameOperation}), the error codes
 * from the operation entry ({@link addErrorCodes}).
 */
import { type ExecutionArgs, type ExecutionResult, getOperationAST } from 'graphql';

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

/**
 * Names the operation in the summary of the request (the server context carries `summary`) as
 * execution or a subscription starts. The name in the document once it validated: a name sent
 * with a request that fails earlier is any string a caller likes, and would fill the metric's
 * label slots.
 */
export function nameOperation(
  args: Pick<ExecutionArgs, 'contextValue' | 'document' | 'operationName'>,
): void {
  const context = args.contextValue as { summary?: RequestSummary; caller?: unknown };
  const { summary } = context;
  if (!summary) return;
  const operation = getOperationAST(args.document, args.operationName);
  summary.operation = operation?.name?.value;
  summary.operationType = operation?.operation;
  const { caller } = context;
  if (typeof caller === 'string') summary.caller = caller;
}
