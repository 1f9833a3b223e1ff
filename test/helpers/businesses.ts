/**
 * Several businesses behind one gateway, as the isolation tests set them up: a sandbox serving
 * each business with credentials of its own, a real `BUSINESSES_FILE` naming them (each with a
 * webhook secret), and a gateway reading that file through the same config code as `npm start`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../sandbox/index.ts';
import type { SettingsEnv } from '../../src/settings.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from './gateway.ts';

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
