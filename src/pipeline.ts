import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useGraphQLSSE } from '@graphql-yoga/plugin-graphql-sse';
import { createSchema, createYoga, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import type { Viewer } from './auth.ts';
import { createContext, type GraphQLContext } from './context.ts';
import { createDocumentPreparer, type PreparedSlot } from './graphql/documents.ts';
import {
  createParser,
  extraValidationRules,
  hardeningPlugins,
  withContractCodes,
} from './graphql/hardening.ts';
import { useCompiledExecution } from './graphql/jit.ts';
import { usePersistedDocuments } from './graphql/persisted.ts';
import { resolvers } from './graphql/resolvers/index.ts';
import { useStaleExtension } from './graphql/stale.ts';
import { useAnswerFormat } from './http/answer.ts';
import { createJsonTransport, type Enveloped } from './http/json-transport.ts';
import { useApolloMultipartSubscriptions } from './http/multipart-subscriptions.ts';
import { addErrorCodes, type RequestSummary, useRequestSummary } from './observability/plugin.ts';
import type { GatewayDeps } from './server.ts';

const SCHEMA_DIR = new URL('../schema/', import.meta.url);

/** The SDL files under schema/, in a stable order. */
export function loadTypeDefs(): string[] {
  return readdirSync(SCHEMA_DIR)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => readFileSync(new URL(file, SCHEMA_DIR), 'utf8'));
}

/**
 * What Yoga receives when it serves as a node:http listener, plus what the HTTP entry found
 * before the body was read: the request's summary, the verified caller and its rate-limit key.
 */
export interface NodeServerContext extends PreparedSlot {
  req: IncomingMessage;
  res: ServerResponse;
  summary: RequestSummary;
  viewer: Viewer;
  /** The caller's identity for per-caller limits: `sub:<subject>`, or `ip:<address>`. */
  caller: string;
}

export const PRIVATE_ANSWER_HEADERS = [
  ['cache-control', 'no-store'],
  ['x-content-type-options', 'nosniff'],
] as const;

/** Yoga sets its own Cache-Control on some answers (`no-cache` on event streams). */
function usePrivateAnswers(): Plugin {
  return {
    onResponse({ response }) {
      for (const [name, value] of PRIVATE_ANSWER_HEADERS) response.headers.set(name, value);
    },
  };
}

/** Aborted when the client's connection closes (for a request that has no Fetch signal). */
function closed(req: IncomingMessage): AbortSignal {
  const controller = new AbortController();
  req.socket.once('close', () => controller.abort());
  return controller.signal;
}

export /** Where Yoga serves graphql-sse's single-connection mode (clients use /graphql). */
const SSE_STREAM_PATH = '/graphql/stream';

/** What the pipeline needs from the gateway's composition. */
export type PipelineDeps = Pick<
  GatewayDeps,
  | 'sources'
  | 'settings'
  | 'graphiql'
  | 'metrics'
  | 'hardening'
  | 'corsOrigins'
  | 'persistedStore'
  | 'callerShare'
  | 'live'
>;

/** Yoga with its plugins, and the JSON transport over the same pipeline. */
export function createPipeline(deps: PipelineDeps) {
  const { metrics } = deps;
  const schema = createSchema<GraphQLContext & NodeServerContext>({
    typeDefs: loadTypeDefs(),
    resolvers,
  });

  // One preparation of each document for every path; Yoga's own caches would keep documents
  // that failed, bounded in entries only.
  const documents = createDocumentPreparer({
    schema,
    parse: createParser(deps.hardening),
    rules: extraValidationRules(deps.hardening),
    maxBytes: deps.hardening.limits.documentCacheBytes,
    observe: (outcome) => metrics.documents.inc({ outcome }),
  });
  metrics.documentCacheSize = () => documents.bytes;

  const yoga = createYoga<NodeServerContext, GraphQLContext>({
    schema,
    parserAndValidationCache: false,
    // Trusted documents may be sent by `documentId` (src/graphql/persisted.ts).
    extraParamNames: ['documentId'],
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Never add the original error to extensions, whatever NODE_ENV says: it may hold a URL.
    maskedErrors: { isDev: false },
    graphiql:
      deps.graphiql === false
        ? false
        : {
            title: 'Payment & KYC gateway',
            ...(deps.graphiql.headers && { headers: JSON.stringify(deps.graphiql.headers) }),
            defaultQuery: DEFAULT_QUERY,
          },
    // GraphiQL with its scripts, styles and workers inside the page (no CDN), so that it works
    // on a network without internet access; loaded only when GraphiQL is on and first opened.
    renderGraphiQL: async (options) =>
      (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    logging: false,
    // Browsers may call only from the listed origins; none by default.
    cors:
      deps.corsOrigins.length === 0
        ? false
        : {
            origin: deps.corsOrigins,
            credentials: false,
            methods: ['GET', 'POST'],
            allowedHeaders: [
              'authorization',
              'content-type',
              'x-request-id',
              'x-graphql-yoga-csrf',
            ],
            exposedHeaders: ['x-request-id', 'retry-after'],
            maxAge: 600,
          },
    batching: false,
    plugins: [
      ...hardeningPlugins(deps.hardening),
      usePersistedDocuments({
        mode: deps.hardening.trustedDocuments,
        store: deps.persistedStore,
        validates: (query) => documents.prepare(query).ok,
      }),
      documents.plugin(),
      // After the hardening plugins, so that it records the codes clients receive.
      useRequestSummary(),
      // A request a browser may send cross-site without a preflight (a plain GET, a form
      // POST) must carry one of these headers; the bearer token counts, as a page cannot set
      // it cross-site without CORS approving.
      useCSRFPrevention({
        requestHeaders: ['x-graphql-yoga-csrf', 'authorization', 'graphql-preflight'],
      }),
      useStaleExtension(),
      useGraphQLSSE({ endpoint: SSE_STREAM_PATH }),
      useApolloMultipartSubscriptions(withContractCodes),
      useCompiledExecution(),
      useAnswerFormat(),
      usePrivateAnswers(),
    ],
    context: (server) =>
      createContext(deps, server, () => server.request?.signal ?? closed(server.req)),
  });

  // JSON POSTs from node:http through the same pipeline (see src/http/json-transport.ts).
  const jsonTransport = createJsonTransport<NodeServerContext>({
    getEnveloped: (server) =>
      yoga.getEnveloped(server as NodeServerContext & YogaInitialContext) as unknown as Enveloped,
    finish: (result, server) => {
      const final = withContractCodes(result);
      addErrorCodes(server.summary, final);
      return final;
    },
  });

  return { yoga, serveJson: jsonTransport };
}

const DEFAULT_QUERY = `# Try the demo references of the sandbox:
query Demo {
  transaction(txRef: "NT-SUCCESS001") {
    txRef status amount currency succeeded timestamp
    customer { fullName email }
    card { first6 last4 expiryMonth expiryYear cardType }
  }
  kycUser(userRef: "usr_demo_tier1") {
    userRef verified level
    currentLevel { slug name verified checks { name passed query } }
  }
}
`;
