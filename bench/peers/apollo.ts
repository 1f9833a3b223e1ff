/**
 * Peer: Apollo Server 5 (standalone) + @apollo/datasource-rest, set up as their documentation
 * recommends and as its users run it in production:
 *
 * - one RESTDataSource per upstream and request, sharing the server's cache, which honours the
 *   upstream's Cache-Control;
 * - a request-lifecycle plugin (Apollo's documented way to log and measure requests) that
 *   writes one pino line at `info` per request through an asynchronous destination
 *   (`PEER_LOG_FILE`, stdout when unset) and observes a prom-client request-duration histogram
 *   in a registry beside prom-client's default metrics (the standalone server has no route of
 *   its own to serve them, so nothing scrapes it here);
 * - with `AUTH_JWT_SECRET` set: the HS256 bearer token verified in `context` on every request
 *   with fast-jwt's verifier and its verified-token cache (`cache: true`), as the gateway and
 *   mercurius-prod remember verified tokens.
 *
 * Prints `{"port":…}` when listening.
 */
import { RESTDataSource } from '@apollo/datasource-rest';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { createVerifier } from 'fast-jwt';
import pino from 'pino';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import {
  kycHeaders,
  kycPath,
  kycUserOf,
  paymentHeaders,
  paymentPath,
  transactionOf,
  typeDefs,
  typeResolvers,
  upstreamUrl,
} from './common.ts';

class Upstream extends RESTDataSource {
  override baseURL = upstreamUrl;

  async transaction(txRef: string) {
    const json = await this.get(paymentPath(txRef), { headers: paymentHeaders }).catch(notFound);
    return json === null ? null : transactionOf(json, txRef);
  }

  async kycUser(userRef: string) {
    const json = await this.get(kycPath(userRef), { headers: kycHeaders }).catch(notFound);
    return json === null ? null : kycUserOf(json, userRef);
  }
}

function notFound(error: { extensions?: { response?: { status?: number } } }): null {
  if (error.extensions?.response?.status === 404) return null;
  throw error;
}

interface Context {
  upstream: Upstream;
}

const destination = pino.destination({
  dest: process.env.PEER_LOG_FILE ?? 1,
  sync: false,
  minLength: 4096,
});
const logger = pino({ level: 'info' }, destination);
const registry = new Registry();
collectDefaultMetrics({ register: registry });
const duration = new Histogram({
  name: 'graphql_request_duration_seconds',
  help: 'GraphQL request duration in seconds',
  labelNames: ['operation'],
  registers: [registry],
});

/** One log line and one histogram observation per request (Apollo's plugin API). */
const observe: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    const started = performance.now();
    return {
      async willSendResponse({ operationName, response }) {
        const seconds = (performance.now() - started) / 1000;
        duration.observe({ operation: operationName ?? '' }, seconds);
        logger.info(
          { operationName, status: response.http.status ?? 200, responseTime: seconds * 1000 },
          'request completed',
        );
      },
    };
  },
};

const secret = process.env.AUTH_JWT_SECRET;
const verify =
  secret === undefined
    ? undefined
    : createVerifier({ key: secret, algorithms: ['HS256'], cache: true });

function authenticate(authorization: string | undefined): void {
  if (verify === undefined) return;
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  if (!token) throw new Error('A bearer token is required.');
  verify(token);
}

const server = new ApolloServer<Context>({
  typeDefs,
  plugins: [observe],
  resolvers: {
    ...typeResolvers,
    Query: {
      transaction: (_: unknown, { txRef }: { txRef: string }, ctx: Context) =>
        ctx.upstream.transaction(txRef),
      transactions: (_: unknown, { txRefs }: { txRefs: string[] }, ctx: Context) =>
        Promise.all(txRefs.map((ref) => ctx.upstream.transaction(ref))),
      kycUser: (_: unknown, { userRef }: { userRef: string }, ctx: Context) =>
        ctx.upstream.kycUser(userRef),
    },
  } as never,
});

const { url } = await startStandaloneServer(server, {
  listen: { port: Number(process.env.PORT ?? '0'), host: '127.0.0.1' },
  context: async ({ req }) => {
    authenticate(req.headers.authorization);
    return { upstream: new Upstream({ cache: server.cache }) };
  },
});
console.log(JSON.stringify({ port: Number(new URL(url).port) }));
process.once('SIGTERM', () => {
  void server.stop().then(() => {
    destination.flushSync();
    process.exit(0);
  });
});
