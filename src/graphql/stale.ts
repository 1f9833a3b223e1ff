/**
 * Says in the response when records were served from a stale copy (the payment service was
 * down): `extensions.stale = { records: [{ txRef, ageSeconds }] }`. Applied by the pipeline's
 * operation plugin when execution is done.
 */
import type { ExecutionResult } from 'graphql';
import type { GraphQLContext } from '../context.ts';

/** The result with the records its execution served stale; the result itself when none were. */
export function withStaleRecords(
  context: Pick<GraphQLContext, 'stale'>,
  result: ExecutionResult,
): ExecutionResult {
  const { stale } = context;
  if (stale.length === 0) return result;
  return { ...result, extensions: { ...result.extensions, stale: { records: stale } } };
}
