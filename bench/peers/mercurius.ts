/**
 * Peer: Fastify 5 + mercurius, set up as its documentation recommends for speed: graphql-jit
 * (`jit: 1`), undici for the upstream calls, and mercurius-cache on the root fields that read
 * records (60 s, as the stub's Cache-Control allows). Prints `{"port":…}` when listening.
 */
import Fastify from 'fastify';
import mercurius from 'mercurius';
import mercuriusCache from 'mercurius-cache';
import { Pool } from 'undici';
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

const pool = new Pool(upstreamUrl, { connections: 64 });

async function get(path: string, headers: Record<string, string>): Promise<unknown> {
  const response = await pool.request({ method: 'GET', path, headers });
  const body = await response.body.json();
  if (response.statusCode === 404) return null;
  if (response.statusCode !== 200) throw new Error(`upstream HTTP ${response.statusCode}`);
  return body;
}

const transaction = async (txRef: string) => {
  const json = await get(paymentPath(txRef), paymentHeaders);
  return json === null ? null : transactionOf(json, txRef);
};

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
      kycUser: async (_: unknown, { userRef }: { userRef: string }) => {
        const json = await get(kycPath(userRef), kycHeaders);
        return json === null ? null : kycUserOf(json, userRef);
      },
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
