/**
 * `npm run schema:compat`: compares schema.graphql with the schema of the last release
 * (schema.released.graphql, committed) using GraphQL Inspector's diff, and fails on a breaking
 * change that CHANGELOG.md's "Unreleased" section does not name.
 *
 * The baseline is a committed file, not a git ref: it works the same in a shallow CI clone of
 * `main`, in a tarball and on a laptop, and changing it is a visible line in a review. A release
 * copies schema.graphql over it (docs/schema.md, "Releasing").
 *
 * A breaking change is named by its schema coordinate in backticks, as GraphQL Inspector reports
 * it (`Transaction.rawStatus`, `Query.transaction.txRef`), anywhere in the Unreleased section.
 * An access rule loosened (`@authenticated`, `@requiresScopes` or `@rowRule` removed from a field
 * or type, a scope set that admits a token the old one refused, a row rule changed) is breaking
 * too, named by the field's or type's coordinate: the diff alone calls a directive's removal
 * dangerous at most, and who may read what is what a client and a reviewer must not miss.
 * Dangerous changes (say, a value added to an enum that clients may switch over) are listed and
 * do not fail. `--released`, `--current` and `--changelog` take other files (the tests use them).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type Change, CriticalityLevel, diff } from '@graphql-inspector/core';
import { buildSchema, type GraphQLSchema, isObjectType } from 'graphql';
import { type AccessRule, accessRuleOf } from '../src/graphql/access.ts';

export interface CompatReport {
  breaking: Change[];
  /** The breaking changes the changelog's Unreleased section does not name. */
  unnamed: Change[];
  dangerous: Change[];
  safe: Change[];
}

/** The text of CHANGELOG.md's `## Unreleased` section (empty when it has none). */
export function unreleasedSection(changelog: string): string {
  const start = /^## +\[?Unreleased\]?.*$/im.exec(changelog);
  if (!start) return '';
  const rest = changelog.slice(start.index + start[0].length);
  const next = /^## /m.exec(rest);
  return next ? rest.slice(0, next.index) : rest;
}

/** What a breaking change is called in the changelog. */
export function coordinate(change: Change): string {
  return change.path ?? change.message;
}

/** Whether `rule` lets through any token at all without a check (no rule, or none). */
function demandsToken(rule: AccessRule | undefined): boolean {
  return rule !== undefined && (rule.authenticated || rule.scopes !== undefined || !!rule.row);
}

/** Why `now` admits a token `before` refused, or undefined when it is at least as strict. */
function loosening(before: AccessRule, now: AccessRule | undefined): string | undefined {
  if (demandsToken(before) && !demandsToken(now)) return 'no longer needs a token';
  if (before.scopes) {
    const stricter = now?.scopes?.every((set) =>
      before.scopes?.some((old) => old.every((scope) => set.includes(scope))),
    );
    if (!stricter) return 'needs fewer scopes than before';
  }
  if (before.row) {
    const row = now?.row;
    if (
      !row ||
      row.rule !== before.row.rule ||
      row.by !== before.row.by ||
      row.anyWith !== before.row.anyWith
    ) {
      return `row rule ${before.row.rule} removed or changed`;
    }
  }
  return undefined;
}

/** Each type and field whose access rule `current` loosens, as a breaking change. */
export function loosenedRules(released: GraphQLSchema, current: GraphQLSchema): Change[] {
  const changes: Change[] = [];
  const compare = (path: string, before: AccessRule | undefined, now: AccessRule | undefined) => {
    const why = before && loosening(before, now);
    if (!why) return;
    const message = `The access rule of '${path}' was loosened: it ${why}.`;
    changes.push({
      type: 'ACCESS_RULE_LOOSENED',
      message,
      path,
      meta: {},
      criticality: { level: CriticalityLevel.Breaking, reason: message },
    });
  };
  for (const type of Object.values(released.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const now = current.getType(type.name);
    if (!isObjectType(now)) continue;
    compare(type.name, accessRuleOf(released, type), accessRuleOf(current, now));
    const fields = now.getFields();
    for (const field of Object.values(type.getFields())) {
      const nowField = fields[field.name];
      if (!nowField) continue;
      compare(
        `${type.name}.${field.name}`,
        accessRuleOf(released, field),
        accessRuleOf(current, nowField),
      );
    }
  }
  return changes;
}

export async function compareSchemas(
  released: string,
  current: string,
  changelog: string,
): Promise<CompatReport> {
  const before = buildSchema(released);
  const now = buildSchema(current);
  const changes = await diff(before, now);
  const section = unreleasedSection(changelog);
  const level = (wanted: CriticalityLevel) =>
    changes.filter((change) => change.criticality.level === wanted);
  const breaking = [...level(CriticalityLevel.Breaking), ...loosenedRules(before, now)];
  return {
    breaking,
    unnamed: breaking.filter((change) => !section.includes(`\`${coordinate(change)}\``)),
    dangerous: level(CriticalityLevel.Dangerous),
    safe: level(CriticalityLevel.NonBreaking),
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      released: {
        type: 'string',
        default: new URL('../schema.released.graphql', import.meta.url).pathname,
      },
      current: { type: 'string', default: new URL('../schema.graphql', import.meta.url).pathname },
      changelog: { type: 'string', default: new URL('../CHANGELOG.md', import.meta.url).pathname },
    },
  });
  let report: CompatReport;
  try {
    report = await compareSchemas(
      readFileSync(values.released, 'utf8'),
      readFileSync(values.current, 'utf8'),
      readFileSync(values.changelog, 'utf8'),
    );
  } catch (error) {
    console.error(`schema:compat: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  const line = (change: Change) => `  ${coordinate(change)}: ${change.message}`;
  console.log(
    `schema changes since the last release: ${report.breaking.length} breaking, ` +
      `${report.dangerous.length} dangerous, ${report.safe.length} safe`,
  );
  for (const change of report.dangerous) console.log(`dangerous${line(change)}`);
  for (const change of report.breaking) {
    const named = !report.unnamed.includes(change);
    console.log(`breaking${line(change)}${named ? ' (named in CHANGELOG.md)' : ''}`);
  }
  if (report.unnamed.length > 0) {
    console.error(
      `${report.unnamed.length} breaking change(s) not named in CHANGELOG.md's "Unreleased" ` +
        `section: name each by its coordinate in backticks (${report.unnamed
          .map((change) => `\`${coordinate(change)}\``)
          .join(', ')}), saying what clients must do, or make the change additive.`,
    );
    process.exit(1);
  }
}
