/**
 * createGateway(deps): the Yoga instance, its plugins and the small HTTP router around it.
 * No globals: everything it uses is passed in, so tests build gateways against their own
 * upstream servers on loopback.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSchema, createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Authenticator } from './auth/tokens.ts';
import type { RecordSources } from './cache/sources.ts';
import type { RecordCache } from './cache/store.ts';
import type { GraphQLContext, ResolverSettings } from './context.ts';
import { resolvers } from './graphql/resolvers/index.ts';
import { createLoaders } from './loaders/index.ts';
import type { KycPageHandler } from './web/kycPage.ts';

const SCHEMA_DIR = new URL('../schema/', import.meta.url);

/** The SDL files under schema/, in a stable order. */
export function loadTypeDefs(): string[] {
  return readdirSync(SCHEMA_DIR)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => readFileSync(new URL(file, SCHEMA_DIR), 'utf8'));
}

/** What Yoga receives when it serves as a node:http listener. */
export interface NodeServerContext {
  req: IncomingMessage;
  res: ServerResponse;
}

export interface GatewayDeps {
  sources: RecordSources;
  cache: RecordCache;
  authenticate: Authenticator;
  settings: ResolverSettings;
  graphiql: false | { headers?: Record<string, string> };
  /** Serves the KYC web page (`/kyc` and its assets) when it is on; absent, those paths 404. */
  kycPage?: KycPageHandler;
  /** Closes upstream pools and the cache. */
  close: () => Promise<void>;
}

export interface Gateway {
  yoga: YogaServerInstance<NodeServerContext, GraphQLContext>;
  /** A node:http request listener serving every path of contract §2. */
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  close: () => Promise<void>;
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  type = 'text/plain; charset=utf-8',
) {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/** Builds the gateway. */
export function createGateway(deps: GatewayDeps): Gateway {
  const yoga = createYoga<NodeServerContext, GraphQLContext>({
    schema: createSchema<GraphQLContext & NodeServerContext>({
      typeDefs: loadTypeDefs(),
      resolvers,
    }),
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
    logging: false,
    context: async ({ request }): Promise<GraphQLContext> => ({
      viewer: await deps.authenticate(request.headers.get('authorization')),
      loaders: createLoaders(deps.sources),
      sources: deps.sources,
      settings: deps.settings,
      signal: request.signal,
    }),
  });

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/healthz') {
      send(res, 200, 'ok\n');
      return;
    }
    if (path === '/readyz') {
      deps.cache.ping().then(
        (ok) => send(res, ok ? 200 : 503, ok ? 'ready\n' : 'cache store not answering\n'),
        () => send(res, 503, 'cache store not answering\n'),
      );
      return;
    }
    if (path === '/graphql') {
      void yoga(req, res);
      return;
    }
    if (path !== undefined && deps.kycPage?.(req, res, path)) return;
    send(res, 404, 'not found\n');
  };

  return { yoga, handle, close: deps.close };
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
