/**
 * schema.graphql and the schema checks CI runs (.ci/run): the committed file is what
 * `npm run schema:print` prints, and `npm run schema:compat` (GraphQL Inspector's diff against
 * schema.released.graphql) fails on a breaking change that CHANGELOG.md's Unreleased section does
 * not name, and passes when it does or when the change is additive. The script runs as CI runs
 * it, as a process, on edited copies of the repository's own files.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = process.cwd();
const released = readFileSync(join(ROOT, 'schema.released.graphql'), 'utf8');
const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'schema-compat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `npm run schema:compat` on the given files; its exit code and output. */
function compat(current: string, changelogText: string) {
  const id = Math.random().toString(36).slice(2);
  const currentFile = join(dir, `${id}.graphql`);
  const changelogFile = join(dir, `${id}.md`);
  writeFileSync(currentFile, current);
  writeFileSync(changelogFile, changelogText);
  const run = spawnSync(
    process.execPath,
    ['scripts/schema-compat.ts', '--current', currentFile, '--changelog', changelogFile],
    { cwd: ROOT, encoding: 'utf8', timeout: 15_000 },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** CHANGELOG.md with a line added to its Unreleased section. */
function withUnreleasedLine(line: string): string {
  return changelog.replace(/^## Unreleased\n/m, `## Unreleased\n\n${line}\n`);
}

const REMOVED_FIELD = released.replace(
  '  """The status exactly as the payment service sent it."""\n  rawStatus: String!\n',
  '',
);

describe('schema.graphql', () => {
  it('is what npm run schema:print prints (schema:check passes)', () => {
    const run = spawnSync(process.execPath, ['scripts/schema-print.ts', '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('schema:check fails on a stale or hand-edited copy, and print mends it', () => {
    const copy = join(dir, 'stale.graphql');
    const printed = readFileSync(join(ROOT, 'schema.graphql'), 'utf8');
    writeFileSync(copy, printed.replace('  rawStatus: String!\n', '  rawStatus: String\n'));
    const script = (...args: string[]) =>
      spawnSync(process.execPath, ['scripts/schema-print.ts', '--file', copy, ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 15_000,
      });
    const stale = script('--check');
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(/stale or hand-edited: run npm run schema:print/);
    expect(script().status).toBe(0);
    expect(readFileSync(copy, 'utf8')).toBe(printed);
    expect(script('--check').status).toBe(0);
  });

  it('holds every root field of the served schema', () => {
    const sdl = readFileSync(join(ROOT, 'schema.graphql'), 'utf8');
    for (const field of ['transaction(', 'transactions(', 'verifyTransaction(', 'kycUser(']) {
      expect(sdl).toContain(`  ${field}`);
    }
  });

  it("passes the repository's own check (the schema since the last release, CHANGELOG.md)", () => {
    const current = readFileSync(join(ROOT, 'schema.graphql'), 'utf8');
    expect(compat(current, changelog).status).toBe(0);
  });
});

describe('npm run schema:compat', () => {
  it('fails on a removed field that CHANGELOG.md does not name, saying which', () => {
    expect(REMOVED_FIELD).not.toBe(released);
    const { status, output } = compat(REMOVED_FIELD, changelog);
    expect(status).toBe(1);
    expect(output).toContain('`Transaction.rawStatus`');
    expect(output).toMatch(/not named in CHANGELOG\.md/);
  });

  it('passes when the Unreleased section names it', () => {
    const { status, output } = compat(
      REMOVED_FIELD,
      withUnreleasedLine('- Removed `Transaction.rawStatus`: read `status` instead.'),
    );
    expect(output).toContain('(named in CHANGELOG.md)');
    expect(status).toBe(0);
  });

  it('does not count a mention under an already released version', () => {
    const { status } = compat(
      REMOVED_FIELD,
      `${changelog}\n- Removed \`Transaction.rawStatus\` (an old note).\n`,
    );
    expect(status).toBe(1);
  });

  it('fails on a required argument added to an existing field unless named', () => {
    const withArgument = released.replace(
      /^ {2}transaction\(\n/m,
      '  transaction(\n    "Must be given from now on."\n    currency: String!\n\n',
    );
    expect(withArgument).not.toBe(released);
    const refused = compat(withArgument, changelog);
    expect(refused.status).toBe(1);
    expect(refused.output).toContain('`Query.transaction.currency`');
    const named = withUnreleasedLine('- `Query.transaction.currency` is required: send it.');
    expect(compat(withArgument, named).status).toBe(0);
  });

  it('passes an additive change (a new field and type) with no changelog entry', () => {
    const additive = released.replace(
      /^(type Query \{[\s\S]*?)^}/m,
      (_, body: string) =>
        `${body}\n  """Added."""\n  orders(first: Int = 10): [Order!]!\n}\n\ntype Order {\n  id: ID!\n}`,
    );
    expect(additive).not.toBe(released);
    const { status, output } = compat(additive, changelog);
    expect(output).toMatch(/0 breaking/);
    expect(status).toBe(0);
  });

  it('fails with a clear message, not a stack, on a schema that does not parse', () => {
    const { status, output } = compat('type Query {', changelog);
    expect(status).toBe(1);
    expect(output).toMatch(/^schema:compat: Syntax Error/m);
    expect(output).not.toMatch(/\n\s+at /);
  });
});

it('runs from npm as CI runs it', () => {
  const output = execFileSync('npm', ['run', '--silent', 'schema:compat'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(output).toMatch(/schema changes since the last release: \d+ breaking/);
});
