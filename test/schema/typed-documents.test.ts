/**
 * docs/schema.md's two recipes for a frontend, run as a frontend team would: each recipe's blocks
 * marked `file=` are written, as the doc has them, into an empty project holding a copy of
 * schema.graphql; the doc's command (the GraphQL Code Generator with the client preset, or
 * gql.tada's CLI) generates the types; `tsc` type-checks the operation's code. A field the schema
 * does not have must then fail the type-check, so the types really come from schema.graphql.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = process.cwd();
const DOC = readFileSync(join(ROOT, 'docs/schema.md'), 'utf8');
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The `file=` blocks of the doc's section under the given heading. */
function recipe(heading: string): Map<string, string> {
  const start = DOC.indexOf(`### ${heading}\n`);
  if (start < 0) throw new Error(`docs/schema.md has no section "${heading}"`);
  const end = DOC.indexOf('\n### ', start + 1);
  const section = DOC.slice(start, end < 0 ? undefined : end);
  const files = new Map<string, string>();
  for (const [, file, body] of section.matchAll(/^```\w+ file=(\S+)\n([\s\S]*?)^```$/gm)) {
    if (file && body !== undefined) files.set(file, body);
  }
  return files;
}

/** An empty frontend project with the recipe's files, schema.graphql and the repo's packages. */
function project(files: Map<string, string>, defaults: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'frontend-'));
  made.push(dir);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  copyFileSync(join(ROOT, 'schema.graphql'), join(dir, 'schema.graphql'));
  for (const [file, body] of [...Object.entries(defaults), ...files]) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), body);
  }
  return dir;
}

function run(dir: string, bin: string, args: string[]) {
  const result = spawnSync(process.execPath, [join(ROOT, 'node_modules', '.bin', bin), ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** `tsc` over the project; then again with a field the schema lacks, which must fail. */
function typeChecks(dir: string, operationFile: string): void {
  const passing = run(dir, 'tsc', ['-p', '.']);
  expect(passing.output).toBe('');
  expect(passing.status).toBe(0);
  const path = join(dir, operationFile);
  const code = readFileSync(path, 'utf8');
  writeFileSync(path, code.replace('= transaction.status;', '= transaction.settled;'));
  const failing = run(dir, 'tsc', ['-p', '.']);
  expect(failing.status).not.toBe(0);
  expect(failing.output).toMatch(/Property 'settled' does not exist/);
}

/** A frontend's ordinary tsconfig (the gql.tada recipe brings its own). */
const TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022', 'DOM'],
    module: 'ESNext',
    moduleResolution: 'bundler',
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  },
  include: ['src'],
});

describe('typed documents from schema.graphql (docs/schema.md)', () => {
  it('the client preset: graphql-codegen, then tsc', () => {
    expect(DOC).toContain('npx graphql-codegen --config codegen.ts\n');
    const files = recipe('With the GraphQL Code Generator client preset');
    expect([...files.keys()]).toEqual(['codegen.ts', 'src/payment.ts']);
    const dir = project(files, { 'tsconfig.json': TSCONFIG });
    const generated = run(dir, 'graphql-codegen', ['--config', 'codegen.ts']);
    expect(generated.status, generated.output).toBe(0);
    const types = readFileSync(join(dir, 'src/gql/graphql.ts'), 'utf8');
    expect(types).toContain('export type PaymentStatusQuery');
    typeChecks(dir, 'src/payment.ts');
  }, 90_000);

  it('gql.tada: gql.tada generate-output, then tsc', () => {
    expect(DOC).toContain('npx gql.tada generate-output\n');
    const files = recipe('With gql.tada');
    expect([...files.keys()]).toEqual(['tsconfig.json', 'src/graphql.ts', 'src/payment.ts']);
    const dir = project(files);
    const generated = run(dir, 'gql.tada', ['generate-output']);
    expect(generated.status, generated.output).toBe(0);
    expect(readFileSync(join(dir, 'src/graphql-env.d.ts'), 'utf8')).toContain('transaction');
    typeChecks(dir, 'src/payment.ts');
  }, 90_000);
});
