/**
 * A lean, fast stand-in for both upstream interfaces, for the benchmark only (node:http, one
 * port for both, since their paths differ):
 *
 * - `GET /pg/api/v1/transaction/status/NT-GEN…`: the sandbox's deterministic SUCCESSFUL record
 *   of that reference (sandbox/data.ts, generatedTransaction); any other reference is 404.
 * - `GET /api/v1/user/kyc?userRef=…&slug=…`: any userRef has a record with 3 levels × 3 checks
 *   (derived from the userRef, so the same user always gets the same record).
 * - Credentials: the stub's own (bench/queries.ts, STUB_CREDENTIALS), or those of any business
 *   of the runs with several (businessCredentials: the same marked with the business's id; the
 *   KYC slug must be that of the business whose secret came with it).
 * - `GET /__stats`: `{"payment":n,"kyc":n}`, the calls answered since the last reset;
 *   `POST /__stats/reset` sets them to zero.
 *
 * Settings (environment): `STUB_PORT` (default 0: a free port), `STUB_LATENCY_MS` (a fixed delay
 * before each upstream answer, default 0). It prints one JSON line `{"port":…}` when listening.
 */
import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatKycTime, GENERATED_PREFIX, generatedTransaction } from '../sandbox/data.ts';
import type { KycCheckJson, KycUserJson } from '../src/upstream/shapes.ts';
import { KYC_PATH, PAYMENT_PATH, STUB_CREDENTIALS } from './queries.ts';

const port = Number(process.env.STUB_PORT ?? '0');
const latencyMs = Number(process.env.STUB_LATENCY_MS ?? '0');
if (!Number.isInteger(port) || !Number.isFinite(latencyMs) || latencyMs < 0) {
  console.error('STUB_PORT must be a whole number and STUB_LATENCY_MS a number ≥ 0');
  process.exit(1);
}

const stats = { payment: 0, kyc: 0 };
const BEARER = `Bearer ${STUB_CREDENTIALS.paymentAccessToken}`;
/** What a business's credentials start with (bench/queries.ts, businessCredentials). */
const BUSINESS_BEARER = `${BEARER}.`;
const BUSINESS_SECRET = `${STUB_CREDENTIALS.kycSecretKey}.`;

/** The KYC slug the secret key sent goes with; undefined for a key the stub does not know. */
function slugOf(secret: string | string[] | undefined): string | undefined {
  if (secret === STUB_CREDENTIALS.kycSecretKey) return STUB_CREDENTIALS.kycBusinessSlug;
  if (typeof secret !== 'string' || !secret.startsWith(BUSINESS_SECRET)) return undefined;
  return `${STUB_CREDENTIALS.kycBusinessSlug}.${secret.slice(BUSINESS_SECRET.length)}`;
}
const NOT_FOUND_TX = JSON.stringify({ message: 'Transaction not found', error: true });
const UNAUTHORIZED = JSON.stringify({ message: 'Unauthorized', error: true });

const LEVELS = [
  {
    level: 1,
    levelName: 'Basic',
    levelSlug: 'tier_1',
    checks: [
      ['gender', { gender: 'female' }, {}],
      ['name', { firstName: 'Amaka', lastName: 'Chukwu' }, { match: true }],
      ['phone', { phone: '2348031112222' }, { verified: true, carrier: 'MTN' }],
    ],
  },
  {
    level: 2,
    levelName: 'Intermediate',
    levelSlug: 'tier_2',
    checks: [
      ['bvn', { bvn: '22200000001' }, { match: true }],
      ['nin', { nin: '10000000001' }, { match: true, confidence: 0.97 }],
      ['dob', { dateOfBirth: '1990-04-12' }, { match: true }],
    ],
  },
  {
    level: 3,
    levelName: 'Advanced',
    levelSlug: 'tier_3',
    checks: [
      [
        'address',
        { street: '12 Marina Road', city: 'Lagos', country: 'NG' },
        { verified: true, method: 'utility_bill' },
      ],
      ['selfie', { imageRef: 'img_bench_0001' }, { match: true, score: 98.5 }],
      [
        'document',
        { type: 'passport', number: 'A00000001', issuingCountry: 'NG' },
        { valid: true, expiresAt: '2030-06-30', flags: [] },
      ],
    ],
  },
] as const;

const KYC_EPOCH = Date.parse('2023-01-01T00:00:00Z');

/** A KYC record of 3 levels × 3 checks for any userRef; its level (1–3) and times vary by user. */
function kycUser(userRef: string): KycUserJson {
  const digest = createHash('sha256').update(userRef).digest();
  const reached = 1 + ((digest[0] ?? 0) % 3);
  const base = KYC_EPOCH + (digest.readUInt32BE(1) % (365 * 86_400)) * 1000;
  return {
    userRef,
    name: `Bench User ${userRef.slice(-6)}`,
    status: reached === 3,
    level: reached,
    levels: LEVELS.map((def, l) => ({
      level: def.level,
      levelName: def.levelName,
      levelSlug: def.levelSlug,
      status: def.level <= reached,
      kyc: def.checks.map(([name, query, result], c): KycCheckJson => {
        const created = base + (l * 3 + c) * 61_000;
        return {
          name,
          status: def.level <= reached,
          query: { ...query },
          result: structuredClone(result) as KycCheckJson['result'],
          createdAt: formatKycTime(created),
          updatedAt: formatKycTime(created + 30_000),
        };
      }),
    })),
  };
}

function send(res: ServerResponse, status: number, body: string): void {
  const answer = (): void => {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      // What a caching client may honour (the peers' caches do; the gateway keeps its own TTLs):
      // the generated records are final transactions and KYC details.
      ...(status === 200 && { 'cache-control': 'public, max-age=60' }),
    });
    res.end(body);
  };
  if (latencyMs > 0) setTimeout(answer, latencyMs);
  else answer();
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const url = req.url ?? '/';
  if (url.startsWith(PAYMENT_PATH)) {
    stats.payment += 1;
    const { authorization } = req.headers;
    if (authorization !== BEARER && !authorization?.startsWith(BUSINESS_BEARER)) {
      return send(res, 401, UNAUTHORIZED);
    }
    const txRef = decodeURIComponent(url.slice(PAYMENT_PATH.length));
    if (!txRef.startsWith(GENERATED_PREFIX) || txRef.length === GENERATED_PREFIX.length) {
      return send(res, 404, NOT_FOUND_TX);
    }
    return send(res, 200, JSON.stringify(generatedTransaction(txRef)));
  }
  if (url.startsWith(`${KYC_PATH}?`)) {
    stats.kyc += 1;
    const slug = slugOf(req.headers['x-secret-key']);
    if (slug === undefined) return send(res, 401, UNAUTHORIZED);
    const query = new URLSearchParams(url.slice(KYC_PATH.length + 1));
    const userRef = query.get('userRef');
    if (userRef === null || query.get('slug') !== slug) {
      return send(res, 404, JSON.stringify({ message: 'User not found', error: true, data: null }));
    }
    const body = {
      message: 'KYC details retrieved successfully',
      error: false,
      data: kycUser(userRef),
    };
    return send(res, 200, JSON.stringify(body));
  }
  if (url === '/__stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats));
    return;
  }
  if (url === '/__stats/reset' && req.method === 'POST') {
    stats.payment = 0;
    stats.kyc = 0;
    res.writeHead(204);
    res.end();
    return;
  }
  res.writeHead(404);
  res.end();
});

server.listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
