/**
 * Says in the response when records were served from a stale copy (the payment service was
 * down): `extensions.stale = { records: [{ txRef, ageSeconds }] }`.
 */
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../context.ts';

export function useStaleExtension(): Plugin<GraphQLContext> {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          const stale = (args.contextValue as GraphQLContext).stale;
          if (stale.length === 0 || Symbol.asyncIterator in result) return;
          const single = result as ExecutionResult;
          setResult({ ...single, extensions: { ...single.extensions, stale: { records: stale } } });
        },
      };
    },
  };
}
