/**
 * Several businesses behind one gateway, as the isolation tests set them up: a sandbox serving
 * each business with credentials of its own, a real `BUSINESSES_FILE` naming them (each with a
 * webhook secret), and a gateway reading that file through the same config code as `npm start`.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  type RecordedRequest,
  type Sandbox,
  type SandboxOptions,
  startSandbox,
} from '../../sandbox/index.ts';
import type { SettingsEnv } from '../../src/settings.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from './gateway.ts';
import type { WireResult } from './transports.ts';

/** One entry of a businesses file: each value inline or `{ "env": "NAME" }` (or anything, to be refused). */
export type BusinessEntry = Record<string, unknown>;

/** A temporary folder for businesses files, removed by `remove`. */
export function businessesFolder(): { path(name?: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'businesses-'));
  return {
    path: (name = 'businesses.json') => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Writes `{ "businesses": entries }` to `file` (replacing it); returns `file`. */
export function writeBusinessesFile(file: string, entries: readonly BusinessEntry[]): string {
  writeFileSync(file, JSON.stringify({ businesses: entries }, null, 2));
  return file;
}

/** The webhook secret the tests give business `id` (at least 16 bytes, its own). */
export function webhookSecretOf(id: string): string {
  return `whsec_${id}_0123456789abcdef0123456789`;
}

/** The entry of the sandbox's business `id`: its credentials, and `webhookSecretOf(id)`. */
export function sandboxBusinessEntry(sandbox: Sandbox, id: string): BusinessEntry {
  const business = sandbox.businesses?.find((b) => b.id === id);
  if (!business) throw new Error(`the sandbox serves no business "${id}"`);
  const { paymentAccessToken, kycSecretKey, kycPublicKey, kycBusinessSlug } = business.credentials;
  return {
    id,
    paymentAccessToken,
    kycSecretKey,
    kycPublicKey,
    kycBusinessSlug,
    webhookSecret: webhookSecretOf(id),
  };
}

/** A sandbox serving several businesses and a gateway over all of them. */
export interface BusinessesSetup {
  sandbox: Sandbox;
  gateway: TestGateway;
  /** The businesses file the gateway read. */
  file: string;
  /** A token of business `biz` (every scope unless told). */
  token(biz: string, claims?: Parameters<TestGateway['token']>[0]): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts a sandbox serving `ids` (the first answers the documented data, each other its own) and
 * a gateway over a businesses file listing them all, with `env`.
 */
export async function startBusinessesGateway(
  ids: readonly string[],
  env: SettingsEnv = {},
  sandboxOptions: Omit<SandboxOptions, 'businesses'> = {},
): Promise<BusinessesSetup> {
  const sandbox = await startSandbox({ ...sandboxOptions, businesses: ids.map((id) => ({ id })) });
  const folder = businessesFolder();
  const file = writeBusinessesFile(
    folder.path(),
    ids.map((id) => sandboxBusinessEntry(sandbox, id)),
  );
  const gateway = await startGateway(sandboxUpstreams(sandbox), env, { businessesFile: file });
  return {
    sandbox,
    gateway,
    file,
    token: (biz, claims = {}) => gateway.token({ ...claims, biz }),
    close: async () => {
      await gateway.close();
      await sandbox.close();
      folder.remove();
    },
  };
}

/**
 * The two businesses the isolation tests compare: the sandbox's first answers the documented
 * data (`merchantRef` `ORDER-…` alone), its second the same with `-SHOP-B` after it and other
 * customers' names.
 */
export const A = 'shop-a';
export const B = 'shop-b';
/** A's `merchantRef`: `ORDER-…` with nothing after it (a quote, escaped or not, follows). */
const A_MERCHANT_REF = /ORDER-[A-Za-z0-9]+\\?"/;
export const B_MARKER = '-SHOP-B';

/** What a client of `business` (A or B) received is its own data and none of the other's. */
export function expectOwn(raw: string, business: string): void {
  if (business === A) {
    expect(raw).toMatch(A_MERCHANT_REF);
    expect(raw).not.toContain(B_MARKER);
  } else {
    expect(raw).toContain(B_MARKER);
    expect(raw).not.toMatch(A_MERCHANT_REF);
  }
}

/** The business whose credentials `request` carried (`'neither'` for none of the sandbox's). */
export function ownerOf(sandbox: Sandbox, request: RecordedRequest): string {
  const owner = (sandbox.businesses ?? []).find(({ credentials: c }) =>
    request.service === 'payment'
      ? request.headers.authorization === `Bearer ${c.paymentAccessToken}`
      : request.headers['x-secret-key'] === c.kycSecretKey &&
        request.query.slug === c.kycBusinessSlug,
  );
  return owner?.id ?? 'neither';
}

/** For which business each payment request for `txRef` was made, in order. */
export function paymentCallsOf(sandbox: Sandbox, txRef: string): string[] {
  return sandbox.requests
    .filter((request) => request.service === 'payment' && request.path.endsWith(`/${txRef}`))
    .map((request) => ownerOf(sandbox, request));
}

/** For which business each KYC request for `userRef` was made, in order. */
export function kycCallsOf(sandbox: Sandbox, userRef: string): string[] {
  return sandbox.requests
    .filter((request) => request.service === 'kyc' && request.query.userRef === userRef)
    .map((request) => ownerOf(sandbox, request));
}

/** A watch of `business`: its record pending, then settled, both its own. */
export function expectPendingThenSettled(out: WireResult, business: string): void {
  expect(out.codes).toEqual([]);
  const statuses = out.results.map(
    (result) => JSON.stringify(result).match(/"status":"(\w+)"/)?.[1],
  );
  expect(statuses).toEqual(['PENDING', 'SUCCESSFUL']);
  expectOwn(JSON.stringify(out.results), business);
}
