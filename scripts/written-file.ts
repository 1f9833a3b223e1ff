/**
 * The one way the scripts that write a committed file (`docs:settings`, `schema:print`) write
 * it, or, with `--check` on the command line, fail without writing when it is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** Writes `text` to `file` unless it already holds it; with `--check`, exits 1 instead. */
export function writeOrCheck(file: URL, text: string, stale: string, written: string): void {
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) return;
  if (process.argv.includes('--check')) {
    console.error(stale);
    process.exit(1);
  }
  writeFileSync(file, text);
  console.log(written);
}
