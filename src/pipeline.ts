/**
 * The one plugin pipeline every transport runs: the schema and its resolvers, the envelop
 * plugins of an operation (limits, document preparation, the operation's own plugin — cost
 * limit, request summary, incremental delivery, compiled execution, stale records — and spans),
 * the per-request context, and the one resolution of persisted documents. The pipeline's own
 * steps are below: documents prepared once, the operation's plugin, and compiled execution. The
 * operation entry (src/transports/operation.ts) runs an operation through it for every
 * transport; server.ts only routes.
 *
 * Yoga serves one thing here: it orchestrates the envelop plugins of an operation
 * (`getEnveloped`, with its error masking). Its HTTP handler serves nothing (every transport is
 * src/transports/), so no plugin with HTTP hooks is registered; GraphiQL's page is rendered by
 * @graphql-yoga/render-graphiql and written by server.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  getVariableValues,
  specifiedRules,
  type ValidationRule,
  validate,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import {
  createYoga,
  type GraphiQLOptions,
  type Plugin,
  type YogaInitialContext,
} from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { createContext, type GraphQLContext } from './context.ts';
import { buildSubgraph } from './graphql/federation.ts';
import {
  costLimit,
  createParser,
  extraValidationRules,
  type HardeningOptions,
  hardeningPlugins,
} from './graphql/hardening.ts';
import {
  type Execute,
  incrementalExecution,
  incrementalValidationRules,
  outgoingPart,
  usesIncrementalDelivery,
  withIncrementalDirectives,
} from './graphql/incremental.ts';
import { createDocumentResolver, type PersistedStore } from './graphql/persisted.ts';
import { resolvers } from './graphql/resolvers/index.ts';
import { withStaleRecords } from './graphql/stale.ts';
import type { GatewayMetrics } from './observability/metrics.ts';
import { nameOperation, type RequestSummary } from './observability/plugin.ts';
import { type Tracing, useOperationSpans } from './observability/tracing.ts';
import type { Enveloped, OperationContext } from './transports/operation.ts';

const SCHEMA_DIR = new URL('../schema/', import.meta.url);

/** The SDL files under schema/, in a stable order. */
export function loadTypeDefs(): string[] {
  return readdirSync(SCHEMA_DIR)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => readFileSync(new URL(file, SCHEMA_DIR), 'utf8'));
}

/**
 * The executable schema every transport serves, and what `npm run schema:print` writes to
 * schema.graphql: the one place the public schema is assembled.
 */
export function createGatewaySchema(options: { introspection: boolean } = { introspection: true }) {
  // The schema of schema/ as a federation subgraph (graphql/federation.ts), with `@defer` and
  // `@stream` declared (graphql/incremental.ts).
  return withIncrementalDirectives(
    buildSubgraph({ typeDefs: loadTypeDefs(), resolvers, introspection: options.introspection }),
  );
}

/** The server context of the pipeline: what the operation entry sets for one operation. */
export type ServerContext = OperationContext & PreparedSlot;

/** GraphiQL's page, rendered once when first asked for (the renderer is loaded only then). */
function graphiqlPage(options: GraphiQLOptions): () => Promise<string> {
  let page: Promise<string> | undefined;
  return () => {
    page ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) =>
      renderGraphiQL(options),
    );
    return page;
  };
}

/** What the pipeline needs from the gateway's composition. */
export interface PipelineDeps {
  graphiql: false | { headers?: Record<string, string> };
  metrics: GatewayMetrics;
  hardening: HardeningOptions;
  /** Documents clients registered by hash (automatic persisted queries). */
  persistedStore: PersistedStore;
  /** OpenTelemetry spans of operations, when tracing is on. */
  tracing?: Tracing;
}

/** GraphiQL's page, the resolution of persisted documents, and one operation's pipeline. */
export function createPipeline(deps: PipelineDeps) {
  const { metrics } = deps;
  const schema = createGatewaySchema({ introspection: deps.hardening.introspection });

  // One preparation of each document for every path; Yoga's own caches would keep documents
  // that failed, bounded in entries only.
  const documents = createDocumentPreparer({
    schema,
    parse: createParser(deps.hardening),
    rules: [...incrementalValidationRules(), ...extraValidationRules(deps.hardening)],
    maxBytes: deps.hardening.limits.documentCacheBytes,
    observe: (outcome) => metrics.document(outcome),
  });
  metrics.documentCacheSize = () => documents.bytes;
  const resolveDocument = createDocumentResolver({
    mode: deps.hardening.trustedDocuments,
    store: deps.persistedStore,
    validates: (query) => documents.prepare(query).ok,
  });

  const hardening = hardeningPlugins(deps.hardening);
  const preparation = documents.plugin();
  // Every plugin of the pipeline, Yoga's own included, as envelop hands them to each plugin.
  const roster: Plugin[] = [];
  const rollCall: Plugin = {
    onPluginInit({ plugins }) {
      roster.push(...plugins);
    },
  };
  const yoga = createYoga<ServerContext, GraphQLContext>({
    schema,
    parserAndValidationCache: false,
    landingPage: false,
    // Never add the original error to extensions, whatever NODE_ENV says: it may hold a URL.
    maskedErrors: { isDev: false },
    graphiql: false,
    logging: false,
    cors: false,
    plugins: [
      rollCall,
      ...hardening,
      preparation,
      useOperationExecution({
        maxCost: deps.hardening.limits.cost,
        production: deps.hardening.production,
      }),
      // After the plugin that replaces the execute function, so that its span wraps that one.
      ...(deps.tracing ? [useOperationSpans(deps.tracing)] : []),
    ],
  });

  // Envelop's execute and subscribe steps are the same functions for every operation unless a
  // plugin instruments them per request: then taken once. Envelop's parse and validate steps
  // are made per operation (they close over its context) only for a document not prepared before.
  const shared = yoga.getEnveloped({} as ServerContext & YogaInitialContext);
  const again = yoga.getEnveloped({} as ServerContext & YogaInitialContext);
  const shortcut =
    parseAndValidateHooks(roster, [...hardening, preparation]).skippable &&
    shared.execute === again.execute &&
    shared.subscribe === again.subscribe;

  return {
    // GraphiQL with its scripts, styles and workers inside the page (no CDN), so that it works
    // on a network without internet access.
    graphiql:
      deps.graphiql === false
        ? undefined
        : graphiqlPage({
            title: 'Payment & KYC gateway',
            ...(deps.graphiql.headers && { headers: JSON.stringify(deps.graphiql.headers) }),
            defaultQuery: DEFAULT_QUERY,
          }),
    resolveDocument,
    /** Whether operations skip envelop's parse and validate steps for documents prepared before. */
    skipsPreparedSteps: shortcut,
    /** The pipeline of one operation, for the operation entry. */
    getEnveloped: (context: OperationContext): Enveloped => {
      const server = context as ServerContext & YogaInitialContext;
      // The context of the operation, the server context extended with the GraphQL context, is
      // made here rather than by a context-building hook (no plugin has one), which envelop
      // would run through two rounds of promise helpers per operation.
      const contextFactory = () =>
        Object.assign(
          server,
          // Everything a request reads is its business's (the operation entry resolved it).
          createContext(server.business.context, server, server.operationEnd),
        );
      if (!shortcut) return { ...yoga.getEnveloped(server), contextFactory };
      // Envelop's per-operation parse and validate steps, made only for a document not prepared
      // before (see `parseAndValidateHooks`).
      let own: Enveloped | undefined;
      const enveloped = () => {
        own ??= yoga.getEnveloped(server);
        return own;
      };
      return {
        schema: shared.schema,
        execute: shared.execute,
        subscribe: shared.subscribe,
        contextFactory,
        parse: (source) => documents.cached(source) ?? enveloped().parse(source),
        validate: (schema, document) =>
          documents.validated(document) ? [] : enveloped().validate(schema, document),
      };
    },
  };
}

/**
 * The plugins with parse or validate hooks that the pipeline knows to do nothing for a document
 * the preparer parsed and validated before, besides the preparer's own (which hands that
 * document over and finds no error): Yoga's engine (whose parse and validate functions the
 * preparer's result replaces), its refusal of a mutation over GET (which acts on Yoga's own HTTP
 * requests only; the operation entry refuses those itself) and its status of validation errors,
 * and, in production, GraphQL Armor's field-suggestion masking (which rewrites errors only).
 */
const YOGA_PARSE_AND_VALIDATE_HOOKS = 3;

/**
 * Whether the operations may skip envelop's parse and validate steps for a document prepared
 * before: only while the plugins with such hooks are exactly those known to do nothing for it.
 * A plugin added with a parse or validate hook of its own turns the shortcut off, so that its
 * hook runs for every operation; `test/unit/pipeline-shortcut.test.ts` fails then, to ask
 * whether it may be added to the known ones.
 */
export function parseAndValidateHooks(
  plugins: readonly unknown[],
  known: readonly object[],
): { hooked: number; skippable: boolean } {
  // Yoga's list holds `false` where an option turned a plugin off.
  const hooked = plugins.filter(
    (plugin): plugin is object =>
      typeof plugin === 'object' &&
      plugin !== null &&
      ('onParse' in plugin || 'onValidate' in plugin),
  );
  const ours = hooked.filter((plugin) => known.includes(plugin)).length;
  return {
    hooked: hooked.length,
    skippable: hooked.length === ours + YOGA_PARSE_AND_VALIDATE_HOOKS,
  };
}

const DEFAULT_QUERY = `# Try the demo references of the sandbox:
query Demo {
  transaction(txRef: "NT-SUCCESS001") {
    txRef status succeeded timestamp
    amountMoney { amount currency }
    appFeeMoney { amount }
    customer { fullName email }
    card { first6 last4 expiryMonth expiryYear cardType }
  }
  kycUser(userRef: "usr_demo_tier1") {
    userRef verified level
    currentLevel { slug name verified checks { name passed query } }
  }
}
`;

// ---------------------------------------------------------------------------------------------
// Parsed and validated documents, prepared once and shared by every transport.
//
// Only documents that parsed AND validated are kept, so a caller sending broken or over-limit
// documents fills nothing. The cache is bounded in bytes, not entries: a parsed document takes
// about fifty times its source text in memory, so an entry bound alone let 1,800 documents of
// 1,600 aliases hold 3 GB.
//

/** Heap bytes a parsed document takes per byte of source (measured ~50 with locations). */
const AST_BYTES_PER_SOURCE_BYTE = 64;
const ENTRY_OVERHEAD_BYTES = 1024;

/** What preparing one document gave: a usable document, or the errors to answer. */
export type Prepared =
  | { ok: true; document: DocumentNode }
  | { ok: false; parseError: unknown }
  | { ok: false; document: DocumentNode; validationErrors: readonly GraphQLError[] };

/** The server-context slot through which a request's preparation reaches Yoga's hooks. */
export interface PreparedSlot {
  prepared?: { source: string; result: Prepared };
}

export interface DocumentPreparer {
  /** Parses and validates `source`, or returns the cached document that did. */
  prepare(source: string): Prepared;
  /**
   * The document of `source` when it parsed and validated before and is still held (served
   * from the cache, counted as such); undefined otherwise.
   */
  cached(source: string): DocumentNode | undefined;
  /** Whether this preparer validated `document` (one it handed out). */
  validated(document: DocumentNode): boolean;
  /** Approximate bytes held, for tests and metrics. */
  readonly bytes: number;
  /** The envelop plugin that makes the pipeline use this cache, and a request's own preparation. */
  plugin(): Plugin<PreparedSlot>;
}

/** Builds the preparer over the schema, the (limit-enforcing) parser and the extra rules. */
export function createDocumentPreparer(options: {
  schema: GraphQLSchema;
  parse: (source: string) => DocumentNode;
  rules: readonly ValidationRule[];
  maxBytes: number;
  /** Told what each preparation did: served from the cache, prepared, or refused. */
  observe?: (outcome: 'cached' | 'prepared' | 'refused') => void;
}): DocumentPreparer {
  const observe = options.observe ?? (() => {});
  const rules = [...specifiedRules, ...options.rules];
  const cache = new LRUCache<string, DocumentNode>({
    maxSize: Math.max(1, options.maxBytes),
    sizeCalculation: (_, source) =>
      source.length * AST_BYTES_PER_SOURCE_BYTE + ENTRY_OVERHEAD_BYTES,
  });
  // Documents this cache handed out or validated, so that Yoga's validation step is skipped.
  const valid = new WeakSet<DocumentNode>();

  const cached = (source: string): DocumentNode | undefined => {
    const known = cache.get(source);
    if (known) observe('cached');
    return known;
  };

  const prepare = (source: string): Prepared => {
    const known = cached(source);
    if (known) return { ok: true, document: known };
    let document: DocumentNode;
    try {
      document = options.parse(source);
    } catch (parseError) {
      observe('refused');
      if (parseError instanceof GraphQLError) markParseFailure(parseError);
      return { ok: false, parseError };
    }
    let validationErrors: readonly GraphQLError[];
    try {
      validationErrors = validate(options.schema, document, rules);
    } catch (error) {
      // GraphQL Armor's rules throw their refusal instead of reporting it.
      validationErrors = [error as GraphQLError];
    }
    if (validationErrors.length > 0) {
      observe('refused');
      return { ok: false, document, validationErrors };
    }
    observe('prepared');
    valid.add(document);
    if (source.length * AST_BYTES_PER_SOURCE_BYTE < options.maxBytes) cache.set(source, document);
    return { ok: true, document };
  };

  return {
    prepare,
    cached,
    validated: (document) => valid.has(document),
    get bytes() {
      return cache.calculatedSize;
    },
    plugin: () => ({
      onParse({ params, context, extendContext, setParsedDocument, setParseFn }) {
        const source = typeof params.source === 'string' ? params.source : params.source.body;
        const own = context.prepared;
        const result = own !== undefined && own.source === source ? own.result : prepare(source);
        extendContext({ prepared: { source, result } });
        if ('document' in result) setParsedDocument(result.document);
        else {
          // Through the parse step, so that every plugin sees (and codes) the parse error.
          const { parseError } = result;
          setParseFn(() => {
            throw parseError;
          });
        }
      },
      onValidate({ params, context, setResult }) {
        if (valid.has(params.documentAST)) {
          setResult([]);
          return;
        }
        const own = context.prepared?.result;
        if (own && 'validationErrors' in own && own.document === params.documentAST) {
          setResult([...own.validationErrors]);
        }
      },
    }),
  };
}

/**
 * Marks a parse error (kept as it is, for its locations) the way GraphQL over HTTP answers it:
 * GRAPHQL_PARSE_FAILED unless it has a code, 400 under `application/graphql-response+json` and
 * 200 under `application/json` (`spec`).
 */
function markParseFailure(error: GraphQLError): void {
  const extensions = error.extensions as Record<string, unknown>;
  extensions.code ??= 'GRAPHQL_PARSE_FAILED';
  extensions.http ??= { spec: true, status: 400 };
}

// ---------------------------------------------------------------------------------------------
// The operation's plugin: one execute hook and one subscribe hook for what acts on an operation
// as it runs (envelop runs every plugin's hook, and what each returns, through its promise
// helpers: a cost per hook and operation). Each step is its own module's function, called in this
// order: the cost limit's refusal (graphql/hardening.ts), the operation's name in the request's
// summary (observability/plugin.ts), then a document with @defer or @stream on the standard
// executor (graphql/incremental.ts) and any other on its compiled function (below); when
// execution is done, the records served stale (graphql/stale.ts) and, for a request that asked
// for parts, each part made public (graphql/incremental.ts).
//

type OnExecute = NonNullable<Plugin<RunContext>['onExecute']>;
type OnExecuteDone = NonNullable<Exclude<Awaited<ReturnType<OnExecute>>, void>['onExecuteDone']>;
type DoneArgs = Parameters<OnExecuteDone>[0];

/** The request context's fields the operation plugin reads. */
type RunContext = Pick<GraphQLContext, 'stale'> & { summary?: RequestSummary };

/** When execution is done: the records served stale, in a single result. */
const staleRecords = {
  onExecuteDone({ args, result, setResult }: DoneArgs) {
    if (Symbol.asyncIterator in result) return;
    const whole = withStaleRecords(args.contextValue as RunContext, result);
    if (whole !== result) setResult(whole);
  },
};

/** When execution is done for a request that asked for parts: each part made public. */
const publicParts = {
  onExecuteDone({ args, result, setResult }: DoneArgs) {
    const context = args.contextValue as RunContext;
    if (Symbol.asyncIterator in result) {
      return {
        onNext(next: { result: ExecutionResult; setResult: (result: ExecutionResult) => void }) {
          const part = outgoingPart(next.result, context.summary);
          if (part !== next.result) next.setResult(part);
        },
      };
    }
    const part = outgoingPart(withStaleRecords(context, result), context.summary);
    if (part !== result) setResult(part);
    return undefined;
  },
};

/**
 * The plugin of an operation's execution and subscription: the cost limit (`maxCost`, its
 * number said only outside `production`), the request summary's operation name, incremental
 * delivery or compiled execution, and stale records.
 */
export function useOperationExecution(options: {
  maxCost: number;
  production: boolean;
}): Plugin<RunContext> {
  const overCost = costLimit(options.maxCost, options.production);
  const compiled = compiledExecution();
  return {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const refusal = overCost(args);
      if (refusal) {
        setResultAndStopExecution(refusal);
        return;
      }
      nameOperation(args);
      // graphql-jit knows neither @defer nor @stream: the standard executor runs those.
      if (!usesIncrementalDelivery(args.document)) {
        const compiledFn = compiled(args, executeFn);
        if (compiledFn) setExecuteFn(compiledFn);
        return staleRecords;
      }
      const incremental = incrementalExecution(args, executeFn);
      if (incremental === 'parts') return publicParts;
      if ('refusal' in incremental) setResultAndStopExecution(incremental.refusal);
      else setExecuteFn(incremental.executeFn);
      return staleRecords;
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refusal = overCost(args);
      if (refusal) {
        setResultAndStopExecution(refusal);
        return;
      }
      nameOperation(args);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Execution compiled by graphql-jit: each operation of a prepared document is compiled once
// into a function that resolves it without walking the document again.
//
// Compiled per document AND operation name (a document may hold several operations), and kept
// only as long as the document itself (a WeakMap on the document, which the byte-bounded
// document cache holds). An operation graphql-jit cannot compile runs through graphql-js, which
// then reports the problem in its own words; so do variables that do not coerce (the compiled
// function checks them first and then runs nothing: the pipeline's own executor runs instead,
// and its errors carry the variable's location and a request error's status). An operation
// whose variables have default values has them coerced by graphql-js first (graphql-jit does not
// fill a non-null variable's default value); the others are coerced once, by the compiled
// function (coercing them twice was 3 % of a cache hit).
//

type Compiled = CompiledQuery | undefined;

/**
 * Compiled execution: the execute function that runs a query or mutation through its compiled
 * function (falling back to `executeFn`), or undefined when the operation runs on `executeFn`
 * itself (it does not compile, or its variables do not coerce).
 */
function compiledExecution(): (args: ExecutionArgs, executeFn: Execute) => Execute | undefined {
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

  return (args, executeFn) => {
    const query = compiledFor(args);
    const operation = query && getOperationAST(args.document, args.operationName);
    if (!query || !operation) return undefined;
    const definitions = operation.variableDefinitions ?? [];
    let variables = args.variableValues ?? {};
    if (definitions.some((definition) => definition.defaultValue !== undefined)) {
      const coerced = getVariableValues(args.schema, definitions, variables);
      if (!coerced.coerced) return undefined;
      variables = coerced.coerced;
    }
    return ((run: ExecutionArgs) => {
      const result = query.query(run.rootValue, run.contextValue, variables) as
        | ExecutionResult
        | Promise<ExecutionResult>;
      // Errors and no data at all: a variable did not coerce, and nothing ran.
      if (!(result instanceof Promise) && result.errors && !('data' in result)) {
        return executeFn(run);
      }
      return result;
    }) as Execute;
  };
}
