/**
 * Peer: Fastify 5 + mercurius, set up as its documentation recommends for speed: graphql-jit
 * (`jit: 1`), undici for the upstream calls, and mercurius-cache on the root fields that read
 * records (60 s, as the stub's Cache-Control allows). Prints `{"port":…}` when listening.
 */
import Fastify from 'fastify';
import mercurius from 'mercurius';
import mercuriusCache from 'mercurius-cache';
import { authenticate, typeDefs, typeResolvers, undiciUpstream } from './common.ts';

const { transaction, kycUser } = undiciUpstream();

const app = Fastify();
app.register(mercurius, {
  schema: typeDefs,
  jit: 1,
  resolvers: {
    ...typeResolvers,
    Query: {
      transaction: (_: unknown, { txRef }: { txRef: string }) => transaction(txRef),
      transactions: (_: unknown, { txRefs }: { txRefs: string[] }) =>
        Promise.all(txRefs.map(transaction)),
      kycUser: (_: unknown, { userRef }: { userRef: string }) => kycUser(userRef),
    },
  } as never,
  context: async (request) => {
    await authenticate(request.headers.authorization);
    return {};
  },
});
app.register(mercuriusCache as never, {
  ttl: 60,
  policy: { Query: { transaction: true, transactions: true, kycUser: true } },
});

const address = await app.listen({ port: Number(process.env.PORT ?? '0'), host: '127.0.0.1' });
console.log(JSON.stringify({ port: Number(new URL(address).port) }));
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
