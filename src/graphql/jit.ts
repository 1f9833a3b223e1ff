/**
 * Execution compiled by graphql-jit: each operation of a prepared document is compiled once
 * into a function that resolves it without walking the document again.
 *
 * Compiled per document AND operation name (a document may hold several operations), and kept
 * only as long as the document itself (a WeakMap on the document, which the byte-bounded
 * document cache holds). An operation graphql-jit cannot compile runs through graphql-js, which
 * then reports the problem in its own words; so do variables that do not coerce. Variables are
 * coerced by graphql-js first (graphql-jit does not fill a non-null variable's default value),
 * and the compiled function receives the coerced values.
 */
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  getOperationAST,
  getVariableValues,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';

type Compiled = CompiledQuery | undefined;

/** The envelop plugin that executes queries and mutations through compiled functions. */
export function useCompiledExecution(): Plugin {
  const compiled = new WeakMap<DocumentNode, Map<string, Compiled>>();

  const compiledFor = (args: ExecutionArgs): Compiled => {
    let byOperation = compiled.get(args.document);
    if (!byOperation) {
      byOperation = new Map();
      compiled.set(args.document, byOperation);
    }
    const name = args.operationName ?? '';
    if (byOperation.has(name)) return byOperation.get(name);
    const result = compileQuery(args.schema, args.document, args.operationName ?? undefined, {
      // Stack traces of resolver errors are masked anyway; capturing them costs time.
      disablingCapturingStackErrors: true,
    });
    const query = isCompiledQuery(result) ? result : undefined;
    byOperation.set(name, query);
    return query;
  };

  return {
    onExecute({ args, setExecuteFn }) {
      const query = compiledFor(args);
      const operation = query && getOperationAST(args.document, args.operationName);
      if (!query || !operation) return;
      const variables = getVariableValues(
        args.schema,
        operation.variableDefinitions ?? [],
        args.variableValues ?? {},
      );
      if (!variables.coerced) return;
      const coerced = variables.coerced;
      setExecuteFn(
        (run) =>
          query.query(run.rootValue, run.contextValue, coerced) as
            | ExecutionResult
            | Promise<ExecutionResult>,
      );
    },
  };
}
