/**
 * Parsed and validated documents, prepared once and shared by every way a request is served
 * (the JSON transport and Yoga's handler).
 *
 * Only documents that parsed AND validated are kept, so a caller sending broken or over-limit
 * documents fills nothing. The cache is bounded in bytes, not entries: a parsed document takes
 * about fifty times its source text in memory, so an entry bound alone let 1,800 documents of
 * 1,600 aliases hold 3 GB.
 */
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  specifiedRules,
  type ValidationRule,
  validate,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

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
  /** Approximate bytes held, for tests and metrics. */
  readonly bytes: number;
  /** The Yoga plugin that makes Yoga's pipeline use this cache, and a request's own preparation. */
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

  const prepare = (source: string): Prepared => {
    const known = cache.get(source);
    if (known) {
      observe('cached');
      return { ok: true, document: known };
    }
    let document: DocumentNode;
    try {
      document = options.parse(source);
    } catch (parseError) {
      observe('refused');
      if (parseError instanceof GraphQLError) requestError(parseError, 'GRAPHQL_PARSE_FAILED');
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
 * Marks an error that stops the request before execution the way GraphQL over HTTP answers it:
 * its schema error code unless it has one, 400 under `application/graphql-response+json` and 200
 * under `application/json` (`spec`), whichever path serves the request.
 */
function requestError(error: GraphQLError, code: string): void {
  const extensions = error.extensions as Record<string, unknown>;
  extensions.code ??= code;
  extensions.http ??= { spec: true, status: 400 };
}
