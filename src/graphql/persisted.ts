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
 *
 * Registration is bounded (contract §11): `PERSISTED_REGISTRATIONS_PER_MINUTE` new documents per
 * caller (past it the operation runs and nothing is stored), `PERSISTED_MAX_BYTES` of documents
 * for the cluster, least recently used dropped first (see createPersistedStore).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GraphQLError, Kind, parse } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { Sealer, type SealKeys } from '../cache/seal.ts';
import type { TrustedDocumentsMode } from '../config.ts';
import type { SharedState } from '../state/index.ts';
import { hashedKeyPart } from '../state/redis.ts';
import { REGISTER_DOCUMENT } from '../state/scripts.ts';

/** Where registered documents are kept (by hex SHA-256). */
export interface PersistedStore {
  get(hash: string): Promise<string | undefined>;
  /**
   * Registers a document sent by `caller` (its hash checked, and validated, by the caller of
   * this). A document already known is only marked used; a new one counts against the caller's
   * `PERSISTED_REGISTRATIONS_PER_MINUTE`. Resolves to false when nothing was stored.
   */
  register(hash: string, query: string, caller: string): Promise<boolean>;
}

/** The trusted documents extracted by codegen, by `sha256:<hex>`. */
export function loadTrustedDocuments(): Map<string, string> {
  const file = new URL('../client/generated/persisted-documents.json', import.meta.url);
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  return new Map(Object.entries(manifest));
}

/** The operation names of the trusted documents (their metric labels are never crowded out). */
export function trustedOperationNames(): string[] {
  const names: string[] = [];
  for (const text of loadTrustedDocuments().values()) {
    for (const definition of parse(text).definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION && definition.name) {
        names.push(definition.name.value);
      }
    }
  }
  return names;
}

/** The bounds of the store (settings `PERSISTED_*`). */
export interface PersistedBounds {
  /** New documents one caller may register per minute; 0: none. */
  registrationsPerMinute: number;
  /** Bytes of documents kept, in Redis for the cluster and in each process. */
  maxBytes: number;
}

const MINUTE_MS = 60_000;
/** A document's last use is written to Redis at most this often per process. */
const TOUCH_EVERY_MS = 60_000;

/**
 * A bounded in-process store (bytes), in front of Redis when there is one, so that every replica
 * knows what a client registered on another. In Redis, documents are bounded for the whole cluster
 * by `PERSISTED_MAX_BYTES` with least-recently-used eviction done by a Lua script, have no TTL
 * (so that Redis's own eviction, under a `volatile-*` policy, never picks them and they never push
 * out records, rate-limit counters or locks), and are sealed with the cache key when one is set.
 * Redis failures are misses (and registrations are then counted per process).
 */
export function createPersistedStore(options: {
  bounds: PersistedBounds;
  state: SharedState;
  encryption?: SealKeys;
}): PersistedStore {
  const { bounds, state } = options;
  const { redis } = state;
  const local = new LRUCache<string, { query: string; touched: number }>({
    max: 100_000,
    maxSize: Math.max(1, bounds.maxBytes),
    sizeCalculation: (entry) => entry.query.length * 2 + 64,
  });
  const sealer = options.encryption && new Sealer(options.encryption);
  const registrations = state.windows(MINUTE_MS, bounds.registrationsPerMinute);
  // One hash tag for every document, the LRU set and the byte count: REGISTER_DOCUMENT evicts
  // documents within one script (on a cluster, the whole store is on one slot; it is bounded).
  const documentKey = (hash: string) => redis?.key('{apq}', 'doc', hash) ?? hash;
  const lru = redis?.key('{apq}', 'lru') ?? '';
  const bytes = redis?.key('{apq}', 'bytes') ?? '';

  /** Whether the caller may register one more new document now. */
  async function allowed(caller: string): Promise<boolean> {
    if (bounds.registrationsPerMinute === 0) return false;
    return registrations.take(`apq:reg:${hashedKeyPart(caller)}`);
  }

  /** Marks a document used in Redis (at most once a minute per process). */
  function touch(hash: string, entry: { touched: number }): void {
    const now = Date.now();
    if (!redis || now - entry.touched < TOUCH_EVERY_MS) return;
    entry.touched = now;
    redis
      .run((client) => client.zAdd(lru, { score: now, value: hash }, { XX: true }))
      .catch(() => redis.failed('apq'));
  }

  /**
   * The document from Redis (kept in this process too); `unreadable` for a value that does not
   * open (sealed with a key no longer held, altered, clear while a key is set): it is replaced
   * by the next registration. Undefined when absent, or when Redis fails.
   */
  async function fromRedis(hash: string): Promise<string | 'unreadable' | undefined> {
    if (!redis) return undefined;
    const key = documentKey(hash);
    let stored: string | null;
    try {
      stored = await redis.run((client) => client.get(key));
    } catch {
      redis.failed('apq');
      return undefined;
    }
    if (stored === null) return undefined;
    let query: string;
    try {
      query = sealer ? sealer.open(key, stored) : stored;
    } catch {
      return 'unreadable';
    }
    if (sha256(query) !== hash) return 'unreadable';
    const entry = { query, touched: 0 };
    touch(hash, entry);
    local.set(hash, entry);
    return query;
  }

  return {
    async get(hash) {
      const held = local.get(hash);
      if (held !== undefined) {
        touch(hash, held);
        return held.query;
      }
      const stored = await fromRedis(hash);
      return stored === 'unreadable' ? undefined : stored;
    },
    async register(hash, query, caller) {
      const held = local.get(hash);
      if (held !== undefined) {
        touch(hash, held);
        return true;
      }
      const stored = await fromRedis(hash);
      if (stored !== undefined && stored !== 'unreadable') return true;
      if (!(await allowed(caller))) return false;
      local.set(hash, { query, touched: Date.now() });
      if (!redis) return true;
      try {
        const key = documentKey(hash);
        const sealed = sealer ? sealer.seal(key, query) : query;
        const replace = stored === 'unreadable' ? '1' : '0';
        const reply = await redis.script(
          REGISTER_DOCUMENT,
          [key, lru, bytes],
          [sealed, String(Date.now()), String(bounds.maxBytes), hash, documentKey(''), replace],
        );
        return Number(reply) !== 0;
      } catch {
        redis.failed('apq');
        return true;
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
  /** Who sent it: new documents count against this caller's registrations. */
  caller: string,
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
  return async (params, caller) => {
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
        // Past the caller's rate nothing is stored, and the operation still runs.
        await store.register(hash, query, caller);
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
    async onParams({ params, setParams, context }) {
      const { caller } = context as { caller?: unknown };
      const resolved = await resolve(params, typeof caller === 'string' ? caller : '');
      if (resolved !== params) setParams(resolved);
    },
  };
}
