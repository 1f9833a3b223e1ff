/**
 * docs/payments.md's Node recipe, run as a merchant's backend runs it: the client preset
 * generates `gql/` from the gateway's schema with the configuration the page gives (imports with
 * their `.ts` extension), and the recipe's file runs under plain `node` (no bundler, no test
 * runner) against a gateway in front of the sandbox; only its example URL is replaced by the
 * gateway's. What the backend sees: a good order is confirmed, an order of the wrong form is
 * "fix the request", a payment service that fails is "retry later".
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generate } from '@graphql-codegen/cli';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandboxGateway, type TestGateway } from '../helpers/gateway.ts';

const execFileAsync = promisify(execFile);
const ROOT = process.cwd();
const WORK = join(ROOT, 'test-results', `payments-recipe-${process.pid}`);

let gateway: TestGateway;
let token: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ gateway, token, close } = await startSandboxGateway({ UPSTREAM_MAX_ATTEMPTS: '1' }));
  mkdirSync(WORK, { recursive: true });
  const doc = readFileSync(join(ROOT, 'docs/payments.md'), 'utf8');
  const recipe = /^```ts test=payments-recipe\n([\s\S]*?)^```$/m.exec(doc)?.[1];
  if (!recipe) throw new Error('docs/payments.md has no block marked test=payments-recipe');
  writeFileSync(
    join(WORK, 'checkout.ts'),
    recipe.replace('https://gateway.example.com/graphql', `${gateway.url}/graphql`),
  );
  // The configuration of docs/payments.md, with this folder's paths.
  await generate(
    {
      cwd: WORK,
      schema: join(ROOT, 'schema.graphql'),
      documents: [join(WORK, 'checkout.ts')],
      generates: {
        [join(WORK, 'gql/')]: {
          preset: 'client',
          config: { importExtension: '.ts', useTypeImports: true, enumsAsTypes: true },
        },
      },
      silent: true,
    },
    true,
  );
}, 60_000);

afterAll(async () => {
  rmSync(WORK, { recursive: true, force: true });
  await close?.();
});

/** Runs `settleCheckout` under plain node with an order of the backend's own; what it gave. */
async function settle(txRef: string, order: Record<string, string>): Promise<string> {
  const runner = join(WORK, `run-${txRef}-${order.total}.ts`);
  writeFileSync(
    runner,
    [
      `globalThis.serviceToken = () => ${JSON.stringify(token)};`,
      'globalThis.db = { orders: {',
      `  get: async (id) => ({ id, ...${JSON.stringify(order)} }),`,
      '  markPaid: async (id, txRef) => ({ shipped: id, txRef }),',
      '  flag: async (id, txRef, problems) => ({ flagged: id, txRef, problems }),',
      '} };',
      "const { settleCheckout } = await import('./checkout.ts');",
      'try {',
      `  console.log(JSON.stringify(await settleCheckout('1001', ${JSON.stringify(txRef)})));`,
      '} catch (error) {',
      '  console.log(JSON.stringify({ thrown: error.message }));',
      '}',
    ].join('\n'),
  );
  const { stdout } = await execFileAsync(process.execPath, [runner], { cwd: WORK });
  return stdout.trim();
}

it('confirms a good order under plain node', async () => {
  const out = await settle('NT-SUCCESS001', {
    total: '15000.50',
    currency: 'NGN',
    reference: 'ORDER-1001',
  });
  expect(JSON.parse(out)).toEqual({ shipped: '1001', txRef: 'NT-SUCCESS001' });
}, 30_000);

it('tells a request to fix from a failure to retry later', async () => {
  const badAmount = await settle('NT-SUCCESS001', {
    total: '1e3',
    currency: 'NGN',
    reference: 'ORDER-1001',
  });
  expect(JSON.parse(badAmount)).toEqual({ thrown: 'fix the request: BAD_USER_INPUT' });
  const down = await settle('NT-ERROR503', {
    total: '15000.50',
    currency: 'NGN',
    reference: 'ORDER-1001',
  });
  expect(JSON.parse(down)).toEqual({ thrown: 'retry later: UPSTREAM_UNAVAILABLE' });
}, 30_000);
