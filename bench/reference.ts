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
 *   upstream(s), maps the answer the way the gateway's resolvers do (status normalisation,
 *   cents, upstream times → ISO, card digits, expiry), serialises.
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

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

class UpstreamFailure extends Error {}

async function getJson(
  target: Pool,
  path: string,
  headers: Record<string, string>,
): Promise<JsonObject | null> {
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
  return JSON.parse(text) as JsonObject;
}

// --- the mapping the gateway's resolvers do, for the stub's well-formed records ---------------

const STATUS: Record<string, string> = {
  SUCCESS: 'SUCCESSFUL',
  SUCCESSFUL: 'SUCCESSFUL',
  SUCCEEDED: 'SUCCESSFUL',
  FAILED: 'FAILED',
  FAILURE: 'FAILED',
  DECLINED: 'FAILED',
  PENDING: 'PENDING',
  PROCESSING: 'PENDING',
  INITIATED: 'PENDING',
};
const MONTHS: Record<string, number> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};
const PAYMENT_TIME =
  /^([A-Z][a-z]{2}) (\d{1,2}), (\d{4}), (\d{1,2}):(\d{2}):(\d{2})[ \u202f](AM|PM)$/;
const KYC_TIME = /^(\d{2})-(\d{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2})$/;

/** `Jan 5, 2024, 3:04:05 PM` read in UTC, as ISO. */
function paymentTime(text: Json | undefined): string | null {
  if (typeof text !== 'string') return null;
  const m = PAYMENT_TIME.exec(text);
  if (m === null) throw new UpstreamFailure('unreadable time');
  const hour = (Number(m[4]) % 12) + (m[7] === 'PM' ? 12 : 0);
  const month = MONTHS[m[1] ?? ''] ?? 0;
  return new Date(
    Date.UTC(Number(m[3]), month, Number(m[2]), hour, Number(m[5]), Number(m[6])),
  ).toISOString();
}

/** `05-01-2024 15:04:05` (DD-MM-YYYY) read in UTC, as ISO. */
function kycTime(text: Json | undefined): string | null {
  if (typeof text !== 'string') return null;
  const m = KYC_TIME.exec(text);
  if (m === null) throw new UpstreamFailure('unreadable time');
  return new Date(
    Date.UTC(
      Number(m[3]),
      Number(m[2]) - 1,
      Number(m[1]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
    ),
  ).toISOString();
}

const cents = (value: Json | undefined): number | null =>
  value === null || value === undefined ? null : Math.round(Number(value) * 100) / 100;
const str = (value: Json | undefined): string | null =>
  value === null || value === undefined ? null : String(value);
const digitsOf = (value: Json | undefined): string =>
  value === null || value === undefined ? '' : String(value).replace(/\D/g, '');

function mapCard(card: JsonObject): JsonObject {
  const first = digitsOf(card.first).slice(0, 6) || null;
  const last = digitsOf(card.last).slice(-4) || null;
  const expiry = str(card.expiry);
  const m = expiry === null ? null : /^(\d{1,2})\/(\d{2})$/.exec(expiry);
  return {
    first6: first,
    last4: last,
    masked: first === null || last === null ? null : `${first}******${last}`,
    expiry,
    expiryMonth: m ? Number(m[1]) : null,
    expiryYear: m ? 2000 + Number(m[2]) : null,
    cardType: str(card.cardType),
  };
}

function mapTransaction(txRef: string, answer: JsonObject): JsonObject {
  const data = answer.data as JsonObject;
  const raw = String(data.txStatus);
  const customer = data.customer as JsonObject | null | undefined;
  const card = data.card as JsonObject | null | undefined;
  return {
    txRef,
    status: STATUS[raw.trim().toUpperCase()] ?? 'UNKNOWN',
    rawStatus: raw,
    succeeded: data.txIsSucces === true,
    amount: cents(data.amount),
    appFee: cents(data.appFee),
    merchantFee: cents(data.merchantFee),
    currency: String(data.currency).trim().toUpperCase(),
    timestamp: paymentTime(data.txTimestamp),
    customer: customer
      ? {
          fullName: str(customer.fullname),
          email: str(customer.email),
          phone: str(customer.phone),
          joinedAt: paymentTime(customer.joinedAt),
        }
      : null,
    card: card ? mapCard(card) : null,
  };
}

function mapKycUser(userRef: string, answer: JsonObject): JsonObject {
  const data = answer.data as JsonObject;
  const levels = (data.levels as JsonObject[]).map((level) => ({
    level: level.level as number,
    slug: level.levelSlug as string,
    name: str(level.levelName),
    verified: level.status === true,
    checks: ((level.kyc as JsonObject[] | null) ?? []).map((check) => ({
      name: check.name as string,
      passed: check.status === true,
      query: check.query ?? null,
      result: check.result ?? null,
      createdAt: kycTime(check.createdAt),
      updatedAt: kycTime(check.updatedAt),
    })),
  }));
  const current = levels.find((level) => level.level === data.level);
  return {
    userRef: str(data.userRef) ?? userRef,
    name: str(data.name),
    verified: data.status === true,
    level: (data.level as number | null) ?? 0,
    currentLevel: current
      ? { slug: current.slug, name: current.name, verified: current.verified }
      : null,
    levels: levels.map(({ level, slug, verified, checks }) => ({ level, slug, verified, checks })),
  };
}

// --- the three operations ----------------------------------------------------------------------

const paymentHeaders = { authorization: `Bearer ${STUB_CREDENTIALS.paymentAccessToken}` };
const kycHeaders = { 'x-secret-key': STUB_CREDENTIALS.kycSecretKey };

async function transaction(txRef: string): Promise<JsonObject | null> {
  const answer = await getJson(
    paymentPool,
    PAYMENT_PATH + encodeURIComponent(txRef),
    paymentHeaders,
  );
  return answer === null ? null : mapTransaction(txRef, answer);
}

async function transactions(txRefs: string[]): Promise<(JsonObject | null)[]> {
  // Duplicates cost one call, as in the gateway.
  const distinct = new Map<string, Promise<JsonObject | null>>();
  for (const ref of txRefs) if (!distinct.has(ref)) distinct.set(ref, transaction(ref));
  return Promise.all(txRefs.map((ref) => distinct.get(ref) as Promise<JsonObject | null>));
}

async function kycUser(userRef: string): Promise<JsonObject | null> {
  const query = new URLSearchParams({ userRef, slug: STUB_CREDENTIALS.kycBusinessSlug });
  const answer = await getJson(kycPool, `${KYC_PATH}?${query.toString()}`, kycHeaders);
  return answer === null ? null : mapKycUser(userRef, answer);
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
    const status = error instanceof UpstreamFailure ? 502 : 400;
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
