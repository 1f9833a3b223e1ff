/**
 * What the benchmark peers share: the gateway's public schema (schema.graphql), the upstream stub's
 * address and credentials, the upstream reads of the mercurius peers (the answers mapped by the
 * peers' own plain functions, mapping.ts), the scalars, and the bare peer's bearer-token check
 * (jose, no cache) of the auth-on runs. Nothing here or in the peers comes from src/.
 */
import { readFileSync } from 'node:fs';
import { GraphQLScalarType } from 'graphql';
import { jwtVerify } from 'jose';
import { Pool } from 'undici';
import { STUB_CREDENTIALS } from '../queries.ts';
import { type Json, kycUserOf, transactionOf } from './mapping.ts';

export { kycUserOf, transactionOf };

/**
 * The gateway's public SDL as printed by `npm run schema:print` (schema/ itself holds federation's
 * `@link`/`@key`, which only a subgraph library reads; the peers serve the plain schema).
 */
export const typeDefs = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');

export const upstreamUrl = process.env.UPSTREAM_URL ?? '';
if (upstreamUrl === '') throw new Error('UPSTREAM_URL must be set');
export const paymentHeaders = { authorization: `Bearer ${STUB_CREDENTIALS.paymentAccessToken}` };
export const kycHeaders = { 'x-secret-key': STUB_CREDENTIALS.kycSecretKey };
export const paymentPath = (txRef: string) =>
  `/pg/api/v1/transaction/status/${encodeURIComponent(txRef)}`;
export const kycPath = (userRef: string) =>
  `/api/v1/user/kyc?${new URLSearchParams({ userRef, slug: STUB_CREDENTIALS.kycBusinessSlug })}`;

/**
 * The upstream reads of the mercurius peers: undici's Pool (keep-alive, 64 connections, as the
 * gateway), one GET per record, `null` for a 404, the record mapped by mapping.ts.
 */
export function undiciUpstream() {
  const pool = new Pool(upstreamUrl, { connections: 64 });
  async function get(path: string, headers: Record<string, string>) {
    const response = await pool.request({ method: 'GET', path, headers });
    const body = (await response.body.json()) as Json;
    if (response.statusCode === 404) return null;
    if (response.statusCode !== 200) throw new Error(`upstream HTTP ${response.statusCode}`);
    return body;
  }
  return {
    transaction: async (txRef: string) => {
      const json = await get(paymentPath(txRef), paymentHeaders);
      return json === null ? null : transactionOf(json, txRef);
    },
    kycUser: async (userRef: string) => {
      const json = await get(kycPath(userRef), kycHeaders);
      return json === null ? null : kycUserOf(json, userRef);
    },
  };
}

const identity = (name: string) =>
  new GraphQLScalarType({ name, serialize: (value) => value, parseValue: (value) => value });

/** The scalars; every field is graphql's default resolver (records carry the schema's names). */
export const typeResolvers = {
  DateTime: identity('DateTime'),
  Decimal: identity('Decimal'),
  JSON: identity('JSON'),
};

const secret = process.env.AUTH_JWT_SECRET;

/** Verifies the bearer token when the run has authentication on (HS256, like the gateway's). */
export async function authenticate(authorization: string | undefined): Promise<void> {
  if (secret === undefined) return;
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  if (!token) throw new Error('A bearer token is required.');
  await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ['HS256'] });
}
