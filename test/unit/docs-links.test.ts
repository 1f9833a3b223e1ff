/**
 * The README and docs/ are read where they are: every link points to a file of the repository
 * (and, for a Markdown file, to a heading it has), never outside it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = process.cwd();
const FILES = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];

/** GitHub-style heading anchors of a Markdown file. */
function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set(
    [...text.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) =>
      (heading ?? '')
        .toLowerCase()
        .replace(/[^a-z0-9 _-]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

it.each(FILES)('%s links only inside the repository, to files and headings that exist', (file) => {
  const path = join(ROOT, file);
  const text = readFileSync(path, 'utf8').replace(/```[\s\S]*?```/g, '');
  const problems: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (!target) continue;
    if (/^[a-z]+:/i.test(target)) {
      problems.push(`${target}: leaves the repository`);
      continue;
    }
    const [relative, anchor] = target.split('#');
    const destination = relative ? resolve(dirname(path), relative) : path;
    if (!destination.startsWith(ROOT) || !existsSync(destination)) {
      problems.push(`${target}: no such file`);
      continue;
    }
    if (anchor && destination.endsWith('.md') && !anchors(destination).has(anchor)) {
      problems.push(`${target}: no such heading`);
    }
  }
  expect(problems).toEqual([]);
});
