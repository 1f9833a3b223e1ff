/**
 * What the runs with several businesses (`npm run bench -- --businesses 2,50`) need: a
 * businesses file of N businesses against the stub (each with its own credentials, which the
 * stub accepts), the gateway's environment with it, and a token per business whose requests are
 * spread over them in turn.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { benchToken, gatewayEnv, ROOT } from './lib.ts';
import { businessCredentials } from './queries.ts';

/** The settings a businesses file replaces (the gateway refuses both at once). */
const SINGLE_BUSINESS_SETTINGS = [
  'PAYMENT_ACCESS_TOKEN',
  'KYC_SECRET_KEY',
  'KYC_PUBLIC_KEY',
  'KYC_BUSINESS_SLUG',
] as const;

/** The ids of a run with `count` businesses. */
export function businessIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `shop-${i + 1}`);
}

/** Writes the businesses file of `count` businesses; returns its path. */
export function writeBusinessesFile(count: number): string {
  const dir = `${ROOT}bench/results`;
  mkdirSync(dir, { recursive: true });
  const file = `${dir}/businesses-${count}.json`;
  const businesses = businessIds(count).map((id) => ({ id, ...businessCredentials(id) }));
  writeFileSync(file, `${JSON.stringify({ businesses }, null, 2)}\n`);
  return file;
}

/** The gateway's environment against the stub: one business, or the `count` of a file. */
export function businessesEnv(
  stubPort: number,
  count: number,
  extra: Record<string, string>,
): Record<string, string> {
  const env = gatewayEnv(stubPort, extra);
  if (count <= 1) return env;
  for (const name of SINGLE_BUSINESS_SETTINGS) delete env[name];
  return { ...env, BUSINESSES_FILE: writeBusinessesFile(count) };
}

/**
 * The headers of each request: a token per business, in turn (one business: the token without
 * a business claim, as a single-business gateway's callers send).
 */
export async function headersInTurn(count: number): Promise<() => Record<string, string>> {
  const tokens =
    count <= 1 ? [await benchToken()] : await Promise.all(businessIds(count).map(benchToken));
  const headers = tokens.map((token) => ({ authorization: `Bearer ${token}` }));
  let turn = 0;
  return () => {
    const next = headers[turn % headers.length] ?? {};
    turn += 1;
    return next;
  };
}
