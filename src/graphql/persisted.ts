/**
 * Persisted documents, one mechanism for both kinds clients send:
 * - trusted documents: the project's own operations, extracted by codegen into
 *   src/client/generated/persisted-documents.json, sent by `documentId` (`sha256:<hex>`) or by hash;
 * - automatic persisted queries (APQ) as Apollo Client, urql and Apollo Kotlin/iOS speak them:
 *   `extensions.persistedQuery = { version: 1, sha256Hash }` without `query` runs the stored
 *   document; an unknown hash answers PERSISTED_QUERY_NOT_FOUND (HTTP 200), upon which the client
 *   sends hash and query together, and the gateway registers the query.
 *
 * The hash must be the SHA-256 of the query text: a mismatch is refused (400) and nothing is
 * stored. Registration follows TRUSTED_DOCUMENTS: `allow` registers any document that parses and
 * validates (checked by the shared document preparer, so it is not parsed twice); `only` accepts
 * the project's documents alone (by id or hash; any other text is refused); `off` stores nothing
 * (a hash alone is never found, a hash with its query runs as a plain query).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { TrustedDocumentsMode } from '../config.ts';
import type { RedisConnection } from '../redis/connection.ts';

/** Where registered documents are kept (by hex SHA-256). */
export interface PersistedStore {
  get(hash: string): Promise<string | undefined>;
  set(hash: string, query: string): Promise<void>;
}

/** The trusted documents extracted by codegen, by `sha256:<hex>`. */
export function loadTrustedDocuments(): Map<string, string> {
  const file = new URL('../client/generated/persisted-documents.json', import.meta.url);
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  return new Map(Object.entries(manifest));
}

/** Registered documents kept a week in Redis (refreshed when registered again). */
const REDIS_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * A bounded in-process store (entries and bytes), in front of Redis when there is one, so that
 * every replica knows what a client registered on another. Redis failures are misses.
 */
export function createPersistedStore(options: {
  maxEntries: number;
  maxBytes: number;
  redis?: RedisConnection;
}): PersistedStore {
  const local = new LRUCache<string, string>({
    max: options.maxEntries,
    maxSize: options.maxBytes,
    sizeCalculation: (query) => query.length * 2 + 64,
  });
  const { redis } = options;
  const key = (hash: string) => redis?.key('apq', hash) ?? hash;
  return {
    async get(hash) {
      const known = local.get(hash);
      if (known !== undefined || !redis) return known;
      try {
        const stored = await redis.run((client) => client.get(key(hash)));
        if (typeof stored !== 'string' || sha256(stored) !== hash) return undefined;
        local.set(hash, stored);
        return stored;
      } catch {
        redis.failed('apq');
        return undefined;
      }
    },
    async set(hash, query) {
      local.set(hash, query);
      if (!redis) return;
      try {
        await redis.run((client) => client.set(key(hash), query, { PX: REDIS_TTL_MS }));
      } catch {
        redis.failed('apq');
      }
    },
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

const HEX_HASH = /^[0-9a-f]{64}$/;

function requestError(message: string, code: string, status: number): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status } } });
}

/** The hash a request names, `undefined` for none, or the error for a malformed one. */
function hashOf(params: {
  extensions?: Record<string, unknown> | undefined;
  documentId?: unknown;
}): string | undefined | GraphQLError {
  if (typeof params.documentId === 'string') {
    const id = params.documentId.replace(/^sha256:/, '');
    return HEX_HASH.test(id)
      ? id
      : requestError('Unknown document id.', 'GRAPHQL_VALIDATION_FAILED', 400);
  }
  const persisted = params.extensions?.persistedQuery;
  if (persisted === undefined || persisted === null) return undefined;
  const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
  if (version !== 1) {
    return requestError('Unsupported persisted query version.', 'GRAPHQL_VALIDATION_FAILED', 400);
  }
  if (typeof sha256Hash !== 'string' || !HEX_HASH.test(sha256Hash.toLowerCase())) {
    return requestError('The persisted query hash is malformed.', 'GRAPHQL_VALIDATION_FAILED', 400);
  }
  return sha256Hash.toLowerCase();
}

/** The request's parameters with the document's text, and no persisted-document fields. */
function plain<P extends { extensions?: unknown }>(params: P, query: string): P {
  const {
    extensions: _extensions,
    documentId: _id,
    ...rest
  } = params as P & {
    documentId?: unknown;
  };
  return { ...rest, query } as unknown as P;
}

/**
 * A request's parameters with the document to run: the text it sent, or the persisted or
 * trusted document it named. Throws the request error (GraphQLError with code and status).
 */
export type DocumentResolver = <
  P extends { extensions?: unknown; documentId?: unknown; query?: unknown },
>(
  params: P,
) => Promise<P>;

/** The one resolution of persisted and trusted documents every transport goes through. */
export function createDocumentResolver(options: {
  mode: TrustedDocumentsMode;
  store: PersistedStore;
  /** Whether a query parses and validates (the shared document preparer). */
  validates: (query: string) => boolean;
}): DocumentResolver {
  const trusted = loadTrustedDocuments();
  const { mode, store } = options;
  return async (params) => {
    const hash = hashOf(params as { extensions?: Record<string, unknown>; documentId?: unknown });
    const query =
      typeof params.query === 'string' && params.query !== '' ? params.query : undefined;
    if (hash instanceof GraphQLError) throw hash;
    if (hash === undefined) {
      if (query === undefined) {
        throw requestError(
          'The request has no query and no document id.',
          'GRAPHQL_PARSE_FAILED',
          400,
        );
      }
      if (mode === 'only') {
        throw requestError(
          'This gateway accepts only trusted documents, sent by their id.',
          'GRAPHQL_VALIDATION_FAILED',
          400,
        );
      }
      return params;
    }
    const known = trusted.get(`sha256:${hash}`);
    if (query !== undefined) {
      if (sha256(query) !== hash) {
        throw requestError(
          'The persisted query hash is not the SHA-256 of the query.',
          'GRAPHQL_VALIDATION_FAILED',
          400,
        );
      }
      if (mode === 'only' && known === undefined) {
        throw requestError(
          'This gateway accepts only trusted documents.',
          'GRAPHQL_VALIDATION_FAILED',
          400,
        );
      }
      if (mode === 'allow' && known === undefined && options.validates(query)) {
        await store.set(hash, query);
      }
      return plain(params, query);
    }
    const stored = known ?? (mode === 'allow' ? await store.get(hash) : undefined);
    if (stored === undefined) {
      if (mode === 'only') {
        throw requestError('Unknown document id.', 'GRAPHQL_VALIDATION_FAILED', 400);
      }
      throw requestError('PersistedQueryNotFound', 'PERSISTED_QUERY_NOT_FOUND', 200);
    }
    return plain(params, stored);
  };
}

/** The Yoga plugin over the same resolution (runs on the request's parameters, before parsing). */
export function usePersistedDocuments(resolve: DocumentResolver): Plugin {
  return {
    async onParams({ params, setParams }) {
      const resolved = await resolve(params);
      if (resolved !== params) setParams(resolved);
    },
  };
}
