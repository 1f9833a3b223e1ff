/**
 * Protections that run before any resolver or upstream call:
 * document size, tokens, depth, aliases, directives (GraphQL Armor), root fields and cost
 * (ours: cost counts `transactions` and federation's `_entities` by the length of their list,
 * variables included), trusted documents, field suggestions and introspection in production,
 * and error codes on every error.
 */
import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { MaxTokensParserWLexer } from '@escape.tech/graphql-armor-max-tokens';
import {
  type ASTVisitor,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  NoSchemaIntrospectionCustomRule,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type Source,
  type ValidationContext,
  type ValidationRule,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { LimitsConfig, TrustedDocumentsMode } from '../config.ts';
import { ErrorCode } from '../errors.ts';

export interface HardeningOptions {
  limits: LimitsConfig;
  production: boolean;
  introspection: boolean;
  trustedDocuments: TrustedDocumentsMode;
}

/** A refusal before execution: always GRAPHQL_VALIDATION_FAILED. */
function refusal(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
}

/** "over the limit", with the number only outside production. */
function overLimit(what: string, limit: number, production: boolean): string {
  return production
    ? `The operation exceeds the ${what} limit.`
    : `The operation exceeds the ${what} limit of ${limit}.`;
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      fragments.set(definition.name.value, definition);
  }
  return fragments;
}

/**
 * Counts the root fields of an operation, fragments and inline fragments expanded (each
 * fragment once per path, and never in a cycle, which validation rejects anyway). Each
 * fragment's count is computed once (`memo`): fragments that spread the previous one twice
 * would otherwise take time exponential in their number, in a document of a few hundred tokens.
 */
function countRootFields(
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  seen: Set<string> = new Set(),
  memo: Map<string, number> = new Map(),
): number {
  let count = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (!selection.name.value.startsWith('__')) count += 1;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      count += countRootFields(selection.selectionSet, fragments, seen, memo);
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment || seen.has(name)) continue;
      let fragmentCount = memo.get(name);
      if (fragmentCount === undefined) {
        const inner = new Set([...seen, name]);
        fragmentCount = countRootFields(fragment.selectionSet, fragments, inner, memo);
        memo.set(name, fragmentCount);
      }
      count += fragmentCount;
    }
  }
  return count;
}

/** Validation rule: at most `max` root fields per operation. */
function maxRootFieldsRule(max: number, production: boolean) {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(operation: OperationDefinitionNode) {
      const count = countRootFields(operation.selectionSet, fragmentsOf(context.getDocument()));
      if (count > max) context.reportError(refusal(overLimit('root field', max, production)));
    },
  });
}

/**
 * Length of a list argument given inline or through a variable: the length its coerced value
 * will have (a list keeps its length, a single value becomes a list of one, an absent variable
 * takes its default), read from the value sent without coercing it; 1 when unknown. Values that
 * do not coerce are refused by execution anyway.
 */
function listLength(
  value: ValueNode | undefined,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
): number {
  if (!value) return 1;
  if (value.kind === Kind.LIST) return value.values.length;
  if (value.kind === Kind.VARIABLE) {
    const name = value.name.value;
    const given = variables[name];
    if (given === undefined) {
      const fallback = operation.variableDefinitions?.find(
        (definition) => definition.variable.name.value === name,
      )?.defaultValue;
      return fallback?.kind === Kind.LIST ? fallback.values.length : 1;
    }
    return Array.isArray(given) ? given.length : 1;
  }
  return 1;
}

/**
 * Estimated cost: one per field resolved, with `transactions` (and federation's `_entities`)
 * multiplying its selection by the number of references asked (each may be an upstream call), and KYC level and check
 * lists by a typical size. Fragments are expanded per use, so repeating a fragment costs; the
 * cost of each fragment is computed once, so that the time stays linear in the document.
 */
export function operationCost(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
): number {
  const known = constantCosts.get(document)?.get(operationName ?? '');
  if (known !== undefined) return known;
  let readVariables = false;
  const cost = costOfOperation(document, operationName, () => {
    readVariables = true;
    return variables;
  });
  // An operation whose list lengths come from no variable costs the same every time.
  if (!readVariables) {
    let byName = constantCosts.get(document);
    if (!byName) {
      byName = new Map();
      constantCosts.set(document, byName);
    }
    byName.set(operationName ?? '', cost);
  }
  return cost;
}

/** Costs that depend on no variable, per document (kept as long as the document) and operation. */
const constantCosts = new WeakMap<DocumentNode, Map<string, number>>();

/** Typical sizes of the lists no argument bounds. */
const LIST_ESTIMATE: Readonly<Record<string, number>> = { levels: 5, checks: 5 };
/** Fields that read one record per entry of a list argument (federation's `_entities` too). */
const LIST_ARGUMENT: Readonly<Record<string, string>> = {
  transactions: 'txRefs',
  _entities: 'representations',
};

function costOfOperation(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: () => Record<string, unknown>,
): number {
  const fragments = fragmentsOf(document);
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation =
    operations.find((o) => o.name?.value === operationName) ??
    (operations.length === 1 ? operations[0] : undefined);
  if (!operation) return 0;
  const fragmentCosts = new Map<string, number>();
  const walk = (
    selectionSet: SelectionSetNode,
    seen: ReadonlySet<string>,
    depth: number,
  ): number => {
    if (depth > 64) return Number.POSITIVE_INFINITY;
    let cost = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const inner = selection.selectionSet ? walk(selection.selectionSet, seen, depth + 1) : 0;
        const name = selection.name.value;
        const listArgument = LIST_ARGUMENT[name];
        const multiplier = listArgument
          ? listLength(
              selection.arguments?.find((a) => a.name.value === listArgument)?.value,
              operation,
              variables(),
            )
          : (LIST_ESTIMATE[name] ?? 1);
        cost += multiplier * (1 + inner);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        cost += walk(selection.selectionSet, seen, depth + 1);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (fragment && !seen.has(name)) {
          let fragmentCost = fragmentCosts.get(name);
          if (fragmentCost === undefined) {
            fragmentCost = walk(fragment.selectionSet, new Set([...seen, name]), depth + 1);
            fragmentCosts.set(name, fragmentCost);
          }
          cost += fragmentCost;
        }
      }
    }
    return cost;
  };
  return walk(operation.selectionSet, new Set(), 0);
}

/**
 * The cost limit: the refusal of an operation whose cost is over `max`, before any resolver
 * runs (the pipeline's operation plugin answers it instead of executing or subscribing), or
 * undefined when the operation is within it.
 */
export function costLimit(
  max: number,
  production: boolean,
): (args: ExecutionArgs) => ExecutionResult | undefined {
  return (args) =>
    operationCost(args.document, args.operationName, args.variableValues ?? {}) > max
      ? { errors: [refusal(overLimit('cost', max, production))] }
      : undefined;
}

/** The schema's error codes; any other code on an error is replaced. */
const CONTRACT_CODES: ReadonlySet<unknown> = new Set(Object.values(ErrorCode));

const REQUEST_ERROR_CODE: ReadonlyArray<[RegExp, string]> = [
  [/JSON|query string|Unexpected|parse|body|content-type|Content-Type/i, 'GRAPHQL_PARSE_FAILED'],
];

/**
 * Every error carries one of the schema's `ErrorCode` values: an error with none, or with a code
 * outside `ErrorCode` (a library's own, such as `BAD_REQUEST` or `OPERATION_RESOLUTION_FAILURE`),
 * becomes GRAPHQL_PARSE_FAILED or GRAPHQL_VALIDATION_FAILED, and `originalError` details are
 * dropped.
 */
export function withContractCodes(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.length) return result;
  const errors = result.errors.map((error) => {
    const code = error.extensions?.code;
    if (CONTRACT_CODES.has(code) && !('originalError' in (error.extensions ?? {}))) {
      return error;
    }
    const { originalError: _dropped, ...extensions } = error.extensions ?? {};
    const mapped = CONTRACT_CODES.has(code)
      ? code
      : (REQUEST_ERROR_CODE.find(([pattern]) => pattern.test(error.message))?.[1] ??
        'GRAPHQL_VALIDATION_FAILED');
    // A request the server could not read is a 400 whatever the client accepts
    // (GraphQL over HTTP: SHOULD, also under application/json).
    // (Yoga marks some with `spec: true`, which keeps 200 under application/json.)
    const previous = extensions.http as
      | { status?: number; headers?: Record<string, string> }
      | undefined;
    const http =
      code === 'BAD_REQUEST'
        ? {
            http: {
              ...(previous?.headers ? { headers: previous.headers } : {}),
              status: previous?.status ?? 400,
            },
          }
        : {};
    return new GraphQLError(error.message, {
      ...(error.nodes && { nodes: error.nodes }),
      ...(error.path && { path: error.path }),
      extensions: { ...extensions, ...http, code: mapped },
    });
  });
  return { ...result, errors };
}

/**
 * Brackets nested deeper than this are refused before parsing: graphql-js parses nested lists,
 * input objects and selection sets recursively, and whether a deep document overflows the stack
 * would otherwise depend on how deep the stack already is when it is parsed.
 */
const MAX_NESTING = 128;

/** The deepest nesting of `{`, `[` and `(` outside strings and comments. */
function nestingOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x23 /* # */) {
      while (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22 /* " */) {
      const block = text.startsWith('"""', i);
      i += block ? 3 : 1;
      while (i < text.length) {
        if (text.charCodeAt(i) === 0x5c /* \\ */) i += 2;
        else if (block ? text.startsWith('"""', i) : text.charCodeAt(i) === 0x22) break;
        else if (!block && (text.charCodeAt(i) === 0x0a || text.charCodeAt(i) === 0x0d)) break;
        else i++;
      }
      if (block) i += 2;
    } else if (c === 0x7b || c === 0x5b || c === 0x28) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d || c === 0x29) depth--;
  }
  return deepest;
}

/**
 * The parser with the limits that are cheapest to check while reading: size, tokens (GraphQL Armor's
 * lexer counts them as it goes, so a huge document stops early), nesting (graphql-js parses
 * nested lists, input objects and selection sets recursively, so a document nested a couple of
 * thousand levels deep, within the token limit, exhausts the stack), and fragment definitions
 * (a chain of fragments spreading each other multiplies the work of every later step). Each is
 * refused as GRAPHQL_VALIDATION_FAILED, like any other limit, whatever the message says.
 */
export function createParser(options: HardeningOptions): (source: string | Source) => DocumentNode {
  const { limits, production } = options;
  return (source) => {
    const text = typeof source === 'string' ? source : source.body;
    if (Buffer.byteLength(text) > limits.documentBytes) {
      throw refusal(overLimit('document size', limits.documentBytes, production));
    }
    if (nestingOf(text) > MAX_NESTING) throw refusal('The document is nested too deeply.');
    let document: DocumentNode;
    try {
      document = new MaxTokensParserWLexer(source, {
        n: limits.tokens,
        onReject: [
          () => {
            throw refusal(overLimit('token', limits.tokens, production));
          },
        ],
      }).parseDocument();
    } catch (error) {
      if (error instanceof RangeError) throw refusal('The document is nested too deeply.');
      throw error;
    }
    let fragments = 0;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments += 1;
    }
    if (fragments > limits.fragments) {
      throw refusal(overLimit('fragment', limits.fragments, production));
    }
    return document;
  };
}

/**
 * Validation rules on top of graphql's own: depth, aliases, directives (GraphQL Armor's rules,
 * fragments flattened), root fields, and introspection when it is off. Shared by Yoga's
 * pipeline whichever transport serves the request.
 */
export function extraValidationRules(options: HardeningOptions): ValidationRule[] {
  const { limits, production } = options;
  const exposeLimits = !production;
  return [
    maxDepthRule({ n: limits.depth, exposeLimits, flattenFragments: true }),
    // Aliases of `__typename` count too (Armor allows them by default): 1,600 of them cost
    // the field-merging rule seconds.
    maxAliasesRule({ n: limits.aliases, exposeLimits, allowList: [] }),
    maxDirectivesRule({ n: limits.directives, exposeLimits }),
    maxRootFieldsRule(limits.rootFields, production),
    ...(options.introspection ? [] : [NoSchemaIntrospectionCustomRule]),
  ];
}

/**
 * The protection plugins: field suggestions hidden from validation errors in production. (The
 * cost limit runs in the pipeline's operation plugin, {@link costLimit}.)
 */
export function hardeningPlugins(options: HardeningOptions): Plugin[] {
  return options.production ? [blockFieldSuggestionsPlugin() as Plugin] : [];
}
