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
import { GraphQLSchema, printSchema } from 'graphql';
import { createGatewaySchema } from '../src/pipeline.ts';
import { writeOrCheck } from './written-file.ts';

export const SCHEMA_FILE = new URL('../schema.graphql', import.meta.url);

/** Also the header of schema.released.graphql, a copy made at a release. */
const HEADER =
  '# The public schema of payment-kyc-gateway, printed from schema/ by `npm run schema:print`.\n' +
  '# Do not edit by hand.\n\n';

/**
 * Federation's own vocabulary (`@link`, `@key`, `@federation__*` and their scalars and enums) is
 * for composing routers, which read it from `_service { sdl }`; a client's operations cannot use
 * it, and client code generators would ask a type for each of its scalars. The public SDL keeps
 * `_service`, `_entities`, `_Any` and `_Entity`, which are fields and types a router queries.
 */
const ROUTER_ONLY = /^(link|key|federation__.*|link__.*)$/;

/** The schema a client sees: the gateway's, less federation's router-only definitions. */
function publicSchema(): GraphQLSchema {
  const config = createGatewaySchema().toConfig();
  return new GraphQLSchema({
    ...config,
    directives: config.directives.filter(({ name }) => !ROUTER_ONLY.test(name)),
    types: config.types.filter(({ name }) => !ROUTER_ONLY.test(name)),
  });
}

/** The text schema.graphql must hold. */
export function printedSchema(): string {
  return `${HEADER}${printSchema(publicSchema())}\n`;
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
