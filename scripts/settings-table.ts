/**
 * `npm run docs:settings`: writes the table of settings in docs/api.md (between its two marker
 * comments) from the declarations of src/settings.ts. `--check` writes nothing and fails when the
 * table is stale (a unit test runs the same comparison).
 */
import { readFileSync } from 'node:fs';
import { settingsTable } from '../src/settings.ts';
import { writeOrCheck } from './written-file.ts';

const DOC = new URL('../docs/api.md', import.meta.url);
const START = /<!-- settings:start[^>]*-->\n/;
const END = '<!-- settings:end -->';

/** docs/api.md with the table written from the declarations. */
export function withSettingsTable(doc: string): string {
  const start = START.exec(doc);
  const end = doc.indexOf(END);
  if (!start || end < start.index) throw new Error('docs/api.md lacks the settings markers');
  const head = doc.slice(0, start.index + start[0].length);
  return `${head}${settingsTable()}\n${doc.slice(end)}`;
}

if (import.meta.main) {
  writeOrCheck(
    DOC,
    withSettingsTable(readFileSync(DOC, 'utf8')),
    'docs/api.md: the settings table is stale; run npm run docs:settings',
    'docs/api.md: settings table written',
  );
}
