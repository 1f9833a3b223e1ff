/**
 * Peer "mercurius-prod": Fastify 5 + mercurius 16 as its users deploy it for production, the
 * like-for-like competitor of the gateway (docs/performance.md says why each piece is
 * there and cites the libraries' documentation):
 *
 * - mercurius with graphql-jit (`jit: 1`), mercurius loaders on the root fields that read one
 *   record (`transaction`, `kycUser`: every occurrence in a document is coalesced and
 *   deduplicated per request), a per-request deduplication for `transactions`, and
 *   mercurius-cache on the three root fields (60 s, what the stub's Cache-Control allows);
 * - undici's Pool for the upstream calls (keep-alive, 64 connections, as the gateway;
 *   `undiciUpstream` in common.ts, shared with the bare mercurius peer);
 * - Fastify's own pino logger at `info` (a line when a request comes in and one when it is
 *   answered, Fastify's default) through an asynchronous destination
 *   (`pino.destination({ dest, sync: false, minLength: 4096 })`, the example of pino's "Asynchronous logging" page) to `PEER_LOG_FILE` (stdout when unset);
 * - fastify-metrics: Prometheus default metrics and a request-duration histogram per route,
 *   served at `/metrics`;
 * - with `AUTH_JWT_SECRET` set: @fastify/jwt verifying the HS256 bearer token on every request
 *   in an `onRequest` hook (`request.jwtVerify()`), with fast-jwt's verified-token cache on
 *   (`verify: { cache: true }`), as the gateway remembers verified tokens.
 *
 * Prints `{"port":…}` when listening.
 */
import fastifyJwt from '@fastify/jwt';
import Fastify from 'fastify';
import metricsPlugin from 'fastify-metrics';
import mercurius from 'mercurius';
import mercuriusCache from 'mercurius-cache';
import pino from 'pino';
import { typeDefs, typeResolvers, undiciUpstream } from './common.ts';

const { transaction, kycUser } = undiciUpstream();

const logFile = process.env.PEER_LOG_FILE;
const destination = pino.destination({ dest: logFile ?? 1, sync: false, minLength: 4096 });

const app = Fastify({ logger: { level: 'info', stream: destination } });

const secret = process.env.AUTH_JWT_SECRET;
if (secret !== undefined) {
  await app.register(fastifyJwt, {
    secret,
    verify: { algorithms: ['HS256'], cache: true },
  });
  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/metrics')) return;
    try {
      await request.jwtVerify();
    } catch (error) {
      return reply.send(error);
    }
  });
}

await app.register(metricsPlugin, {
  endpoint: '/metrics',
  routeMetrics: { enabled: { histogram: true, summary: false } },
});

interface Query<P> {
  params: P;
}

await app.register(mercurius, {
  schema: typeDefs,
  jit: 1,
  resolvers: {
    ...typeResolvers,
    Query: {
      transactions: (_: unknown, { txRefs }: { txRefs: string[] }) => {
        // Duplicates cost one call, as in the gateway.
        const distinct = new Map<string, ReturnType<typeof transaction>>();
        for (const ref of txRefs) if (!distinct.has(ref)) distinct.set(ref, transaction(ref));
        return Promise.all(txRefs.map((ref) => distinct.get(ref)));
      },
    },
  } as never,
  loaders: {
    Query: {
      transaction: (queries: Query<{ txRef: string }>[]) =>
        Promise.all(queries.map(({ params }) => transaction(params.txRef))),
      kycUser: (queries: Query<{ userRef: string }>[]) =>
        Promise.all(queries.map(({ params }) => kycUser(params.userRef))),
    },
  } as never,
});
await app.register(mercuriusCache as never, {
  ttl: 60,
  policy: { Query: { transaction: true, transactions: true, kycUser: true } },
});

const address = await app.listen({ port: Number(process.env.PORT ?? '0'), host: '127.0.0.1' });
console.log(JSON.stringify({ port: Number(new URL(address).port) }));
process.once('SIGTERM', () => {
  void app.close().then(() => {
    destination.flushSync();
    process.exit(0);
  });
});
