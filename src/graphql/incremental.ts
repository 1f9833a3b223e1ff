/**
 * Incremental delivery (`@defer` and `@stream`) with graphql-yoga's pieces: the two directives
 * and the validation rules of its plugin (@graphql-yoga/plugin-defer-stream), execution by its
 * standard executor (graphql-jit, the pipeline's compiled execution, knows neither directive:
 * such documents skip it), and its `multipart/mixed` and event-stream answers.
 *
 * Each part goes out as soon as it exists to a client that asked for parts: `Accept` with
 * `multipart/mixed` (Apollo Client, Relay, urql) or `text/event-stream` (graphql-sse in either
 * mode). Any other request (plain JSON, GET, WebSocket) gets the whole answer at once: the parts
 * are merged into one result before it leaves execution, so every later step (error masking,
 * codes, the answer's status) sees an ordinary result.
 *
 * Errors inside deferred or streamed parts (`incremental[].errors`) are masked and given the
 * schema's codes here, as top-level errors are elsewhere: Yoga's masking and its output
 * sanitizing look at top-level `errors` only.
 */
import {
  GraphQLDeferDirective,
  GraphQLStreamDirective,
  mergeIncrementalResult,
} from '@graphql-tools/utils';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import {
  BREAK,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type execute,
  GraphQLError,
  GraphQLSchema,
  getDirectiveValues,
  specifiedRules,
  type ValidationRule,
  visit,
} from 'graphql';
import { isAsyncIterable, maskError, type Plugin } from 'graphql-yoga';
import { BadUserInputError, publicError } from '../errors.ts';
import { addErrorCodes, type RequestSummary } from '../observability/plugin.ts';
import { withContractCodes } from './hardening.ts';

const INCREMENTAL_DIRECTIVES = new Set(['defer', 'stream']);

/** An execute function, as envelop's hooks hand it on. */
export type Execute = typeof execute;

/** The schema with `@defer` and `@stream` declared (as Yoga's plugin would add them). */
export function withIncrementalDirectives(schema: GraphQLSchema): GraphQLSchema {
  const missing = [GraphQLDeferDirective, GraphQLStreamDirective].filter(
    (directive) => !schema.getDirective(directive.name),
  );
  if (missing.length === 0) return schema;
  const extended = new GraphQLSchema({
    ...schema.toConfig(),
    directives: [...schema.getDirectives(), ...missing],
  });
  extended.extensions = schema.extensions;
  return extended;
}

/**
 * The incremental-delivery validation rules of Yoga's plugin, to add to graphql's own: unique
 * labels, no `@defer`/`@stream` on a mutation's or subscription's root, `@stream` only on lists.
 * The package exports only its plugin, so the rules are read from the plugin's validation hook.
 *
 * Not its copy of OverlappingFieldsCanBeMergedRule (which it would put in place of graphql's, to
 * compare `@stream` arguments too): graphql 16.15's rule meters its work, the copy does not — a
 * selection of 2,600 repeated fields took 6.5 s to validate with it, and is refused at once with
 * graphql's. Two merged fields with different `@stream` arguments are streamed by the first's.
 */
export function incrementalValidationRules(): ValidationRule[] {
  const added: ValidationRule[] = [];
  const payload = {
    params: { rules: [...specifiedRules] },
    addValidationRule: (rule: ValidationRule) => added.push(rule),
  };
  useDeferStream().onValidate?.(
    payload as unknown as Parameters<NonNullable<Plugin['onValidate']>>[0],
  );
  return added.filter((rule) => rule.name !== 'OverlappingFieldsCanBeMergedRule');
}

/** Whether a document uses `@defer` or `@stream` anywhere (remembered per document). */
const usage = new WeakMap<DocumentNode, boolean>();
export function usesIncrementalDelivery(document: DocumentNode): boolean {
  let uses = usage.get(document);
  if (uses === undefined) {
    uses = false;
    visit(document, {
      Directive(node) {
        if (INCREMENTAL_DIRECTIVES.has(node.name.value)) {
          uses = true;
          return BREAK;
        }
        return undefined;
      },
    });
    usage.set(document, uses);
  }
  return uses;
}

/**
 * The refusal of a `@stream` whose `initialCount` (given literally or by a variable) is negative,
 * before execution; the executor would otherwise fail on it as an unexpected error.
 */
function badStreamArguments(
  document: DocumentNode,
  variables: Record<string, unknown> | null | undefined,
): BadUserInputError | undefined {
  let refusal: BadUserInputError | undefined;
  visit(document, {
    Field(node) {
      if (!node.directives?.some((directive) => directive.name.value === 'stream')) return;
      let values: Record<string, unknown> | undefined;
      try {
        values = getDirectiveValues(GraphQLStreamDirective, node, variables ?? {});
      } catch {
        return undefined;
      }
      const count = values?.initialCount;
      if (typeof count === 'number' && count < 0) {
        refusal = new BadUserInputError('@stream initialCount must be 0 or more.');
        return BREAK;
      }
      return undefined;
    },
  });
  return refusal;
}

/** One part of an incremental answer, in the format graphql-yoga's executor sends. */
interface IncrementalPart extends ExecutionResult {
  hasNext?: boolean;
  incremental?: ReadonlyArray<ExecutionResult & { path?: ReadonlyArray<string | number> }>;
}

/** The parts of an incremental answer merged into one result. */
async function wholeAnswer(parts: AsyncIterable<IncrementalPart>): Promise<ExecutionResult> {
  let whole: IncrementalPart | undefined;
  for await (const part of parts) {
    if (whole === undefined) whole = { ...part };
    else mergeIncrementalResult({ incrementalResult: part, executionResult: whole });
  }
  const { hasNext: _hasNext, incremental: _incremental, ...result } = whole ?? {};
  return result;
}

/** Errors of a part as a client may see them: masked, with schema codes, no internal extension. */
function maskedPartErrors(errors: ReadonlyArray<GraphQLError>): GraphQLError[] {
  const masked = errors.map((error) =>
    error instanceof GraphQLError && error.originalError == null
      ? error
      : (maskError(error, 'Unexpected error.', false) as GraphQLError),
  );
  return (withContractCodes({ errors: masked }).errors ?? []).map((error) => {
    const { extensions } = publicError(error);
    return new GraphQLError(error.message, {
      ...(error.nodes && { nodes: error.nodes }),
      ...(error.path && { path: error.path }),
      ...(extensions && { extensions }),
    });
  });
}

/** A part with every error in it (its own, and its deferred or streamed items') made public. */
function publicPart(part: IncrementalPart): IncrementalPart {
  const hasErrors = (result: ExecutionResult) => (result.errors?.length ?? 0) > 0;
  if (!hasErrors(part) && !part.incremental?.some(hasErrors)) return part;
  return {
    ...part,
    ...(part.errors && { errors: maskedPartErrors(part.errors) }),
    ...(part.incremental && {
      incremental: part.incremental.map((item) =>
        item.errors ? { ...item, errors: maskedPartErrors(item.errors) } : item,
      ),
    }),
  };
}

/**
 * What the pipeline's operation plugin does with a document with `@defer` or `@stream` (declared
 * in the schema by {@link withIncrementalDirectives} and validated by
 * {@link incrementalValidationRules} where the pipeline prepares documents, rather than by
 * registering Yoga's plugin, which would swap graphql's field-merging rule for its unmetered
 * copy), before execution: the refusal of its arguments, or the execute function that gives the
 * whole answer to a request that did not ask for parts (`parts` in the server context, set by
 * the operation entry from the transport: multipart and SSE frame parts), or `'parts'` when the
 * request asked for them ({@link outgoingPart} then makes each public).
 */
export function incrementalExecution(
  args: ExecutionArgs,
  executeFn: Execute,
): { refusal: ExecutionResult } | { executeFn: Execute } | 'parts' {
  const refusal = badStreamArguments(args.document, args.variableValues);
  if (refusal) return { refusal: { errors: [refusal] } };
  if ((args.contextValue as { parts?: boolean }).parts === true) return 'parts';
  return {
    executeFn: (async (run: ExecutionArgs) => {
      const result = (await executeFn(run)) as ExecutionResult | AsyncIterable<IncrementalPart>;
      return isAsyncIterable(result) ? wholeAnswer(result) : result;
    }) as Execute,
  };
}

/**
 * A part (or the single result) as it goes out to a request that asked for parts: every error in
 * it masked and coded, and recorded in the request's summary.
 */
export function outgoingPart(
  result: ExecutionResult,
  summary: RequestSummary | undefined,
): ExecutionResult {
  const part = publicPart(result as IncrementalPart);
  if (summary) {
    for (const item of [part, ...(part.incremental ?? [])]) addErrorCodes(summary, item);
  }
  return part;
}
