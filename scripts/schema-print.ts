/**
 * `npm run schema:print`: writes the whole public schema, as the gateway serves it, to
 * schema.graphql at the repository's root (committed: frontend and mobile teams generate their
 * types from it, and `npm run schema:compat` compares it with the last release's), in the order
 * of the files under schema/ (read sorted by name), so that the same SDL always prints the same.
 * `--check` (`npm run schema:check`) writes nothing and fails when the committed file is stale.
 * `--file <path>` writes or checks another file (the tests use it).
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { printSchema } from 'graphql';
import { createGatewaySchema } from '../src/pipeline.ts';
import { writeOrCheck } from './written-file.ts';

export const SCHEMA_FILE = new URL('../schema.graphql', import.meta.url);

/** Also the header of schema.released.graphql, a copy made at a release. */
const HEADER =
  '# The public schema of payment-kyc-gateway, printed from schema/ by `npm run schema:print`.\n' +
  '# Do not edit by hand.\n\n';

/** The text schema.graphql must hold. */
export function printedSchema(): string {
  return `${HEADER}${printSchema(createGatewaySchema())}\n`;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { check: { type: 'boolean' }, file: { type: 'string' } },
  });
  writeOrCheck(
    values.file ? pathToFileURL(values.file) : SCHEMA_FILE,
    printedSchema(),
    'schema.graphql is stale or hand-edited: run npm run schema:print and commit.',
    'schema.graphql written',
  );
}
