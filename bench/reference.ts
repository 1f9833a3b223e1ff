/**
 * The benchmark's reference: a bare node:http server that answers the benchmark's fixed request
 * bodies (bench/queries.ts) with the same JSON the gateway returns (`{"data":{…}}`), by making
 * the same upstream call(s) with the same HTTP client (undici Pool.request, keep-alive, one pool
 * of UPSTREAM_MAX_CONNECTIONS per upstream, as src/upstream/http.ts) — without GraphQL, schema
 * validation, dataloader, cache or authentication. It is the floor a hand-written REST-to-JSON
 * endpoint would cost on the same machine, so gateway/reference is the price of everything the
 * gateway adds.
 *
 * - `POST /graphql`: parses the JSON body, recognises the document by its exact text, calls the
 *   upstream(s), maps the answer with the peers' plain functions (bench/peers/mapping.ts: the
 *   fields it reads checked, status enum, amounts rounded, times → ISO, card digits, expiry),
 *   keeps the fields the document selects, serialises.
 * - `POST /graphql/precomputed`: the reference for cache hits. Parses the JSON body and answers
 *   a body computed once per (document, variables) and kept in a Map.
 *
 * Settings (environment): `UPSTREAM_URL` (the stub's base address, both interfaces),
 * `UPSTREAM_MAX_CONNECTIONS` (default 64, the gateway's default), `PORT` (default 0). Prints one
 * JSON line `{"port":…}` when listening.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { type Json, kycUserOf, transactionOf, UpstreamAnswerError } from './peers/mapping.ts';
import {
  KYC_PATH,
  KYC_USER_QUERY,
  PAYMENT_PATH,
  STUB_CREDENTIALS,
  TRANSACTION_QUERY,
  TRANSACTIONS_QUERY,
} from './queries.ts';

const upstreamUrl = process.env.UPSTREAM_URL;
if (upstreamUrl === undefined) {
  console.error('UPSTREAM_URL must be set');
  process.exit(1);
}
const connections = Number(process.env.UPSTREAM_MAX_CONNECTIONS ?? '64');
const port = Number(process.env.PORT ?? '0');
const TIMEOUT_MS = 5000;

function pool(): Pool {
  return new Pool(new URL(upstreamUrl as string).origin, {
    connections,
    keepAliveTimeout: 30_000,
    maxResponseSize: 2 * 1024 * 1024,
  });
}
const paymentPool = pool();
const kycPool = pool();

class UpstreamFailure extends Error {}

async function getJson(
  target: Pool,
  path: string,
  headers: Record<string, string>,
): Promise<Json | null> {
  const response = await target.request({
    method: 'GET',
    path,
    headers: { accept: 'application/json', ...headers },
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  const text = await response.body.text();
  if (response.statusCode === 404) return null;
  if (response.statusCode !== 200) throw new UpstreamFailure(`HTTP ${response.statusCode}`);
  return JSON.parse(text) as Json;
}

// --- the records, mapped by the peers' plain functions, cut to the benchmark's selections ------

function selectTransaction(record: ReturnType<typeof transactionOf>) {
  const { txRef, status, rawStatus, succeeded, amount, appFee, merchantFee, currency } = record;
  return {
    txRef,
    status,
    rawStatus,
    succeeded,
    amount,
    appFee,
    merchantFee,
    currency,
    timestamp: record.timestamp,
    customer: record.customer,
    card: record.card,
  };
}

function selectKycUser(record: ReturnType<typeof kycUserOf>) {
  const current = record.currentLevel;
  return {
    userRef: record.userRef,
    name: record.name,
    verified: record.verified,
    level: record.level,
    currentLevel: current
      ? { slug: current.slug, name: current.name, verified: current.verified }
      : null,
    levels: record.levels.map(({ level, slug, verified, checks }) => ({
      level,
      slug,
      verified,
      checks,
    })),
  };
}

// --- the three operations ----------------------------------------------------------------------

const paymentHeaders = { authorization: `Bearer ${STUB_CREDENTIALS.paymentAccessToken}` };
const kycHeaders = { 'x-secret-key': STUB_CREDENTIALS.kycSecretKey };

type Transaction = ReturnType<typeof selectTransaction>;

async function transaction(txRef: string): Promise<Transaction | null> {
  const answer = await getJson(
    paymentPool,
    PAYMENT_PATH + encodeURIComponent(txRef),
    paymentHeaders,
  );
  return answer === null ? null : selectTransaction(transactionOf(answer, txRef));
}

async function transactions(txRefs: string[]): Promise<(Transaction | null)[]> {
  // Duplicates cost one call, as in the gateway.
  const distinct = new Map<string, Promise<Transaction | null>>();
  for (const ref of txRefs) if (!distinct.has(ref)) distinct.set(ref, transaction(ref));
  return Promise.all(txRefs.map((ref) => distinct.get(ref) as Promise<Transaction | null>));
}

async function kycUser(userRef: string): Promise<ReturnType<typeof selectKycUser> | null> {
  const query = new URLSearchParams({ userRef, slug: STUB_CREDENTIALS.kycBusinessSlug });
  const answer = await getJson(kycPool, `${KYC_PATH}?${query.toString()}`, kycHeaders);
  return answer === null ? null : selectKycUser(kycUserOf(answer, userRef));
}

/** The serialised GraphQL response of one request body, or undefined for an unknown document. */
async function execute(query: unknown, variables: Record<string, unknown>): Promise<string> {
  if (query === TRANSACTION_QUERY) {
    return JSON.stringify({ data: { transaction: await transaction(String(variables.txRef)) } });
  }
  if (query === TRANSACTIONS_QUERY) {
    const refs = (variables.txRefs as unknown[]).map(String);
    return JSON.stringify({ data: { transactions: await transactions(refs) } });
  }
  if (query === KYC_USER_QUERY) {
    return JSON.stringify({ data: { kycUser: await kycUser(String(variables.userRef)) } });
  }
  throw new TypeError('unknown document');
}

const precomputed = new Map<string, string>();

function reply(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'application/graphql-response+json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = req.url ?? '/';
  if (req.method !== 'POST' || (path !== '/graphql' && path !== '/graphql/precomputed')) {
    reply(res, 404, '{"errors":[{"message":"not found"}]}');
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let parsed: { query?: unknown; variables?: Record<string, unknown> };
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof parsed;
  } catch {
    reply(res, 400, '{"errors":[{"message":"body is not JSON"}]}');
    return;
  }
  const variables = parsed.variables ?? {};
  try {
    if (path === '/graphql/precomputed') {
      const key = `${String(parsed.query)}\u0000${JSON.stringify(variables)}`;
      let body = precomputed.get(key);
      if (body === undefined) {
        body = await execute(parsed.query, variables);
        precomputed.set(key, body);
      }
      reply(res, 200, body);
      return;
    }
    reply(res, 200, await execute(parsed.query, variables));
  } catch (error) {
    const status =
      error instanceof UpstreamFailure || error instanceof UpstreamAnswerError ? 502 : 400;
    reply(res, status, JSON.stringify({ errors: [{ message: String(error) }] }));
  }
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  void handle(req, res);
});
server.listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void Promise.allSettled([paymentPool.close(), kycPool.close()]).then(() => process.exit(0));
});
