/**
 * Rules about the repository's own text, checked over the files themselves: which module may
 * import which, and that code, comments and docs cite nothing a reader of the repository lacks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** Every file under `dir` (relative to the repository) whose name ends with one of `endings`. */
function filesUnder(dir: string, endings: readonly string[]): string[] {
  const entries = readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && endings.some((ending) => entry.name.endsWith(ending)))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .filter((path) => !path.includes('node_modules'))
    .sort();
}

/** The modules a TypeScript file imports (static, dynamic and re-exports), as repository paths. */
function importsOf(path: string): string[] {
  const text = readFileSync(join(ROOT, path), 'utf8');
  const specifiers = [...text.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map(
    (match) => match[1] ?? '',
  );
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => relative(ROOT, resolve(ROOT, dirname(path), specifier)));
}

describe('module boundaries', () => {
  it('finds imports the way the checks below read them', () => {
    expect(importsOf('src/upstream/shapes.ts')).toContain('src/model/records.ts');
  });

  it('src/model/ imports nothing from src/upstream/ (upstream/ reads into the model)', () => {
    const offending = filesUnder('src/model', ['.ts']).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('src/upstream/'))
        .map((target) => `${file} imports ${target}`),
    );
    expect(offending).toEqual([]);
  });
});

/** A citation of a document outside the repository: a section of the contract, an issue. */
const OUTSIDE_CITATION = /contract\s*§|§\s*\d|\bissues?\s*#?\d+|\bissue\s+#/i;

describe('citations', () => {
  it('the pattern finds what it is meant to find', () => {
    for (const cited of ['(contract §13)', 'Contract §11:', 'Issue 21, finding 6', 'issue #4']) {
      expect(cited).toMatch(OUTSIDE_CITATION);
    }
    expect('describeIssue(issue)').not.toMatch(OUTSIDE_CITATION);
  });

  it('code, comments and docs cite no document the repository lacks', () => {
    const files = [
      ...['src', 'test', 'scripts', 'bench', 'sandbox'].flatMap((dir) =>
        filesUnder(dir, ['.ts', '.graphql']),
      ),
      ...filesUnder('docs', ['.md']),
      ...filesUnder('schema', ['.graphql']),
      'README.md',
    ].filter((file) => file !== 'test/unit/source-rules.test.ts');
    expect(files.length).toBeGreaterThan(100);
    const cited = files.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          OUTSIDE_CITATION.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(cited).toEqual([]);
  });
});
