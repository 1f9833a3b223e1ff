/**
 * `npm run schema:print`: writes the whole public schema, as the gateway serves it, to
 * schema.graphql at the repository's root (committed: frontend and mobile teams generate their
 * types from it, and `npm run schema:compat` compares it with the last release's), in the order
 * of the files under schema/ (read sorted by name), so that the same SDL always prints the same.
 * The access rules (`@authenticated`, `@requiresScopes`, `@rowRule`, `@personalData`) are printed
 * where they apply, so that a reader of schema.graphql sees who may read what; building the
 * schema fails when a root field or a field of a `@personalData` type has no rule
 * (src/graphql/access.ts), so this script fails then too.
 * It also writes docs/api.md's table of every access rule (between its `access:` markers), from
 * the same schema.
 * `--check` (`npm run schema:check`) writes nothing and fails when either is stale.
 * `--file <path>` writes or checks another file (the tests use it).
 */

import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { getDocumentNodeFromSchema } from '@graphql-tools/utils';
import {
  type DocumentNode,
  GraphQLDirective,
  GraphQLList,
  GraphQLNonNull,
  GraphQLSchema,
  GraphQLString,
  isObjectType,
  print,
  visit,
} from 'graphql';
import { type AccessRule, accessRuleOf } from '../src/graphql/access.ts';
import { createGatewaySchema } from '../src/pipeline.ts';
import { markdownTable } from '../src/settings.ts';
import { writeOrCheck } from './written-file.ts';

export const SCHEMA_FILE = new URL('../schema.graphql', import.meta.url);
const API_DOC = new URL('../docs/api.md', import.meta.url);
const ACCESS_START = /<!-- access:start[^>]*-->\n/;
const ACCESS_END = '<!-- access:end -->';

/** Also the header of schema.released.graphql, a copy made at a release. */
const HEADER =
  '# The public schema of payment-kyc-gateway, printed from schema/ by `npm run schema:print`.\n' +
  '# Do not edit by hand.\n\n';

/**
 * Federation's own vocabulary (`@link`, `@key`, `@federation__*` and their scalars and enums) is
 * for composing routers, which read it from `_service { sdl }`; a client's operations cannot use
 * it, and client code generators would ask a type for each of its scalars. The public SDL keeps
 * `_service`, `_entities`, `_Any` and `_Entity`, which are fields and types a router queries, and
 * the access rules; `@requiresScopes` takes its scopes as strings here (a router reads
 * Federation's own definition, whose `federation__Scope` is a string, from `_service`).
 */
const ROUTER_ONLY = /^(link|key|federation__.*|link__.*)$/;

/**
 * The document of `schema` without the router-only directives where they are used, and without
 * a schema definition when its root types have their usual names (as `printSchema` prints it).
 */
function withoutRouterOnly(document: DocumentNode): DocumentNode {
  return visit(document, {
    Directive: (node) => (ROUTER_ONLY.test(node.name.value) ? null : undefined),
    SchemaDefinition: (node) =>
      node.operationTypes.every(
        (operation) =>
          operation.type.name.value ===
          `${operation.operation[0]?.toUpperCase()}${operation.operation.slice(1)}`,
      )
        ? null
        : undefined,
  });
}

/** The schema a client sees: the gateway's, less federation's router-only definitions. */
function publicSchema(): GraphQLSchema {
  const config = createGatewaySchema().toConfig();
  const scopes = new GraphQLNonNull(
    new GraphQLList(new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString)))),
  );
  return new GraphQLSchema({
    ...config,
    directives: config.directives
      .filter(({ name }) => !ROUTER_ONLY.test(name))
      .map((directive) =>
        directive.name === 'requiresScopes'
          ? new GraphQLDirective({ ...directive.toConfig(), args: { scopes: { type: scopes } } })
          : directive,
      ),
    types: config.types.filter(({ name }) => !ROUTER_ONLY.test(name)),
  });
}

/**
 * A blank line before each described field, argument or enum value that follows another, as
 * graphql's `printSchema` writes them (`print` puts none).
 */
function spaced(printed: string): string {
  const lines: string[] = [];
  let inDescription = false;
  for (const line of printed.split('\n')) {
    const trimmed = line.trim();
    const opens = !inDescription && trimmed.startsWith('"""');
    const previous = lines.at(-1)?.trim() ?? '';
    if (opens && line.startsWith(' ') && !/[{(]$/.test(previous) && previous !== '') {
      lines.push('');
    }
    lines.push(line);
    const quotes = trimmed.split('"""').length - 1;
    if (quotes % 2 === 1) inDescription = !inDescription;
  }
  return lines.join('\n');
}

/** The text schema.graphql must hold. */
export function printedSchema(): string {
  const printed = print(withoutRouterOnly(getDocumentNodeFromSchema(publicSchema())));
  return `${HEADER}${spaced(printed)}\n`;
}

/** One rule, in words, for the table's columns: token, scopes, rows. */
function ruleCells(rule: AccessRule): string[] {
  const scopes =
    rule.scopes?.map((set) => set.map((scope) => `\`${scope}\``).join(' and ')).join(', or ') ?? '';
  const row = rule.row
    ? `\`${rule.row.rule}\` by \`${rule.row.by}\`; any with \`${rule.row.anyWith}\``
    : '';
  return [rule.authenticated ? 'yes' : '', scopes, row];
}

/**
 * The table of every access rule the schema declares, in schema.graphql's order: each type with
 * a rule of its own, and each field with one.
 */
export function accessTable(schema: GraphQLSchema = createGatewaySchema()): string {
  const rows: string[][] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const typeRule = accessRuleOf(schema, type);
    if (typeRule) rows.push([`\`${type.name}\` (type)`, ...ruleCells(typeRule)]);
    for (const field of Object.values(type.getFields())) {
      const rule = accessRuleOf(schema, field);
      if (rule) rows.push([`\`${type.name}.${field.name}\``, ...ruleCells(rule)]);
    }
  }
  return markdownTable(['Field or type', 'Token', 'Scopes (any one set)', 'Row rule'], rows);
}

/** docs/api.md with the access table written from the schema. */
export function withAccessTable(doc: string, table: string = accessTable()): string {
  const start = ACCESS_START.exec(doc);
  const end = doc.indexOf(ACCESS_END);
  if (!start || end < start.index) throw new Error('docs/api.md lacks the access markers');
  return `${doc.slice(0, start.index + start[0].length)}${table}\n${doc.slice(end)}`;
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
  if (!values.file) {
    writeOrCheck(
      API_DOC,
      withAccessTable(readFileSync(API_DOC, 'utf8')),
      "docs/api.md's table of access rules is stale: run npm run schema:print and commit.",
      'docs/api.md: access table written',
    );
  }
}
