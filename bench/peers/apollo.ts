/**
 * Peer: Apollo Server 5 (standalone) + @apollo/datasource-rest, set up as their documentation
 * recommends: one RESTDataSource per upstream and request, sharing the server's cache, which
 * honours the upstream's Cache-Control. Prints `{"port":…}` when listening.
 */
import { RESTDataSource } from '@apollo/datasource-rest';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import {
  authenticate,
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

const server = new ApolloServer<Context>({
  typeDefs,
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
    await authenticate(req.headers.authorization);
    return { upstream: new Upstream({ cache: server.cache }) };
  },
});
console.log(JSON.stringify({ port: Number(new URL(url).port) }));
process.once('SIGTERM', () => {
  void server.stop().then(() => process.exit(0));
});
