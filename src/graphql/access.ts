/**
 * Who may read what, as the SDL declares it (schema/access.graphql): Federation's
 * `@authenticated` and `@requiresScopes`, and the gateway's `@rowRule` for the records an end
 * user's token may read. This module is the one place those rules are read and enforced:
 * {@link enforceAccessRules} wraps, once when the schema is built, every root field and every
 * other field whose rule (its own or its return type's) asks more than a token, every
 * subscription's `subscribe`, and every entity type's `__resolveReference` (`_entities`), so
 * that every transport, `@defer`/`@stream` part and
 * federation call goes through the same check, before the resolver and so before any upstream
 * call. It refuses to build a schema in which a root field, or a field of a `@personalData`
 * type, has no rule. `npm run schema:print`, `npm run schema:compat` and docs/api.md's table read
 * the rules with {@link accessRuleOf} too.
 */
import { getDirective } from '@graphql-tools/utils';
import {
  defaultFieldResolver,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { ALL_SCOPES, NO_ACCESS, type Viewer } from '../auth.ts';
import type { GraphQLContext } from '../context.ts';
import { ForbiddenError, UnauthenticatedError } from '../errors.ts';
import { RowRule } from './generated/enums.ts';

/** A `@rowRule` as the SDL states it. */
export interface RowRuleUse {
  rule: RowRule;
  /** The argument (field) or key field (entity type) naming the record. */
  by: string;
  /** The scope that reads every record. */
  anyWith: string;
}

/** The rules one field or type declares. */
export interface AccessRule {
  authenticated: boolean;
  /** `@requiresScopes`: any one of the sets, each set's scopes all together. */
  scopes?: readonly (readonly string[])[];
  row?: RowRuleUse;
}

type Directable = GraphQLField<unknown, unknown> | GraphQLObjectType;

/** The rules `node` declares in the SDL, or undefined when it declares none. */
export function accessRuleOf(schema: GraphQLSchema, node: Directable): AccessRule | undefined {
  const authenticated = getDirective(schema, node, 'authenticated') !== undefined;
  const scopes = getDirective(schema, node, 'requiresScopes')?.[0]?.scopes as
    | string[][]
    | undefined;
  const row = getDirective(schema, node, 'rowRule')?.[0] as RowRuleUse | undefined;
  if (!authenticated && scopes === undefined && row === undefined) return undefined;
  return { authenticated, ...(scopes !== undefined && { scopes }), ...(row && { row }) };
}

/** Whether the viewer's token holds the row named `value` under `rule`. */
const OWNS: Record<RowRule, (viewer: Viewer, value: string) => boolean> = {
  [RowRule.OWN_PAYMENTS]: (viewer, txRef) => viewer.txRefs.has(txRef),
  [RowRule.OWN_KYC_RECORD]: (viewer, userRef) =>
    viewer.subject !== undefined && viewer.subject === userRef,
};

/** The refusal of a row the viewer may not read. */
const ROW_REFUSAL: Record<RowRule, (anyWith: string) => string> = {
  [RowRule.OWN_PAYMENTS]: (anyWith) =>
    `This token may read only the payments listed in its txRefs claim; others need the scope ${anyWith}.`,
  [RowRule.OWN_KYC_RECORD]: (anyWith) =>
    `This token may read only its own KYC details; reading another user's needs the scope ${anyWith}.`,
};

/** The refusal of a field the viewer lacks the scopes for, or undefined when it has them. */
function scopeRefusal(
  viewer: Viewer,
  scopes: readonly (readonly string[])[],
): ForbiddenError | undefined {
  if (scopes.some((set) => set.every((scope) => viewer.scopes.has(scope)))) return undefined;
  const wanted = scopes.map((set) => set.join(' and ')).join(', or ');
  return new ForbiddenError(`This field needs the scope ${wanted}.`);
}

/** The refusal of the row named `value`, or undefined when the viewer may read it. */
function rowRefusal(viewer: Viewer, row: RowRuleUse, value: unknown): ForbiddenError | undefined {
  if (viewer.scopes.has(row.anyWith)) return undefined;
  if (typeof value === 'string' && OWNS[row.rule](viewer, value)) return undefined;
  return new ForbiddenError(ROW_REFUSAL[row.rule](row.anyWith));
}

/** The refusal of a field as a whole (token, then scopes), or undefined. */
function fieldRefusal(viewer: Viewer, rules: readonly AccessRule[]): Error | undefined {
  for (const rule of rules) {
    if (rule.authenticated && viewer === NO_ACCESS) {
      return new UnauthenticatedError('A bearer token is required.');
    }
    const refused = rule.scopes && scopeRefusal(viewer, rule.scopes);
    if (refused) return refused;
  }
  return undefined;
}

/**
 * The positions of a list argument the rules refuse, set for the field's resolver to answer at
 * those positions (and load nothing there): a list field's other entries are still answered.
 */
const refusedPositions = new WeakMap<object, ReadonlyMap<number, ForbiddenError>>();

/**
 * The refusals, by position, that the field's row rule made of the entries of its list
 * argument; empty when every entry may be read. A resolver of a field whose `@rowRule` names a
 * list argument answers these positions with them.
 */
export function positionRefusals(args: object): ReadonlyMap<number, ForbiddenError> {
  return refusedPositions.get(args) ?? new Map();
}

type Resolve = GraphQLFieldResolver<unknown, GraphQLContext, Record<string, unknown>>;

/** A field's check, from its own rule and its return type's: throws the refusal, if any. */
function fieldCheck(
  field: GraphQLField<unknown, unknown>,
  rules: readonly AccessRule[],
): (args: Record<string, unknown>, viewer: Viewer) => void {
  const row = rules.find((rule) => rule.row)?.row;
  const argument = row && field.args.find((arg) => arg.name === row.by);
  if (row && !argument) {
    throw new Error(`@rowRule on ${field.name} names no argument "${row.by}".`);
  }
  const listed =
    argument !== undefined &&
    isListType(isNonNullType(argument.type) ? argument.type.ofType : argument.type);
  return (args, viewer) => {
    const refused = fieldRefusal(viewer, rules);
    if (refused) throw refused;
    if (!row) return;
    const value = args[row.by];
    if (!listed) {
      const refusedRow = rowRefusal(viewer, row, value);
      if (refusedRow) throw refusedRow;
      return;
    }
    const refusals = new Map<number, ForbiddenError>();
    (value as unknown[]).forEach((entry, index) => {
      const refusedRow = rowRefusal(viewer, row, entry);
      if (refusedRow) refusals.set(index, refusedRow);
    });
    // Set even when empty: an arguments object a compiled document reused would otherwise keep
    // the refusals of an earlier caller.
    refusedPositions.set(args, refusals);
  };
}

/** The rules that apply to `field`: its own, and those of the type it returns (not its rows). */
function rulesFor(schema: GraphQLSchema, field: GraphQLField<unknown, unknown>): AccessRule[] {
  const rules: AccessRule[] = [];
  const own = accessRuleOf(schema, field);
  if (own) rules.push(own);
  const returned = getNamedType(field.type);
  const typeRule = isObjectType(returned) ? accessRuleOf(schema, returned) : undefined;
  // A type's row rule names its key field: it applies to the type's entity references, where
  // the key is known before any read, not to every field that returns the type.
  if (typeRule && (typeRule.authenticated || typeRule.scopes)) {
    rules.push({ authenticated: typeRule.authenticated, ...(typeRule.scopes && typeRule) });
  }
  return rules;
}

function objectTypes(schema: GraphQLSchema): GraphQLObjectType[] {
  return Object.values(schema.getTypeMap()).filter(
    (type: GraphQLNamedType): type is GraphQLObjectType =>
      isObjectType(type) && !type.name.startsWith('__'),
  );
}

function rootTypes(schema: GraphQLSchema): GraphQLObjectType[] {
  return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(
    (type): type is GraphQLObjectType => type !== null && type !== undefined,
  );
}

/**
 * The fields that need a rule and have none: every root field (but federation's `_service` and
 * `_entities`, which the subgraph library adds: `_entities` follows each entity type's rules,
 * `_service` the federation module's), and every field of a `@personalData` type that has no
 * rule of its own or of its type. Each as `Type.field`.
 */
export function unruledFields(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  for (const type of rootTypes(schema)) {
    for (const field of Object.values(type.getFields())) {
      if (field.name === '_service' || field.name === '_entities') continue;
      if (!accessRuleOf(schema, field)) missing.push(`${type.name}.${field.name}`);
    }
  }
  for (const type of objectTypes(schema)) {
    if (getDirective(schema, type, 'personalData') === undefined) continue;
    if (accessRuleOf(schema, type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (!accessRuleOf(schema, field)) missing.push(`${type.name}.${field.name}`);
    }
  }
  return missing;
}

/** Scopes the SDL names that no token of this gateway's can hold a meaning for. */
function unknownScopes(schema: GraphQLSchema): string[] {
  const known = new Set<string>(ALL_SCOPES);
  const unknown: string[] = [];
  const visit = (where: string, rule: AccessRule | undefined) => {
    for (const scope of [...(rule?.scopes?.flat() ?? []), ...(rule?.row ? [rule.row.anyWith] : [])])
      if (!known.has(scope)) unknown.push(`${where}: ${scope}`);
  };
  for (const type of objectTypes(schema)) {
    visit(type.name, accessRuleOf(schema, type));
    for (const field of Object.values(type.getFields()))
      visit(`${type.name}.${field.name}`, accessRuleOf(schema, field));
  }
  return unknown;
}

interface SubgraphExtensions {
  apollo?: { subgraph?: { resolveReference?: (...args: unknown[]) => unknown } };
}

/**
 * Enforces the SDL's rules on `schema`, in place, and returns it. Throws when a field that needs
 * a rule has none, a rule names an unknown scope, or a row rule names no argument or key field.
 */
export function enforceAccessRules(schema: GraphQLSchema): GraphQLSchema {
  const missing = unruledFields(schema);
  if (missing.length > 0) {
    throw new Error(
      `These fields have no access rule (@authenticated, @requiresScopes or @rowRule on the field, or on its @personalData type): ${missing.join(', ')}.`,
    );
  }
  const unknown = unknownScopes(schema);
  if (unknown.length > 0)
    throw new Error(`Access rules name unknown scopes: ${unknown.join(', ')}.`);
  const subscription = schema.getSubscriptionType();
  const roots = new Set(rootTypes(schema));
  for (const type of objectTypes(schema)) {
    for (const field of Object.values(type.getFields())) {
      const rules = rulesFor(schema, field);
      if (rules.length === 0) continue;
      // A field below the root is reached only through a root field or an entity reference,
      // both checked, and each refuses a request without a token (every root field has a rule,
      // and each rule refuses one): a type's bare `@authenticated` holds there already, and a
      // wrapper would only cost a resolver call (and graphql-jit a resolve info) per record.
      if (!roots.has(type) && rules.every((rule) => !rule.scopes && !rule.row)) continue;
      const check = fieldCheck(field, rules);
      if (type === subscription && field.subscribe) {
        const subscribe = field.subscribe as Resolve;
        // Checked when the stream is first read, as the resolver's own generator would be.
        field.subscribe = async function* (source, args, ctx: GraphQLContext, info) {
          check(args, ctx.viewer);
          yield* (await subscribe(source, args, ctx, info)) as AsyncIterable<unknown>;
        };
        continue;
      }
      const resolve = (field.resolve ?? defaultFieldResolver) as Resolve;
      field.resolve = (source, args, ctx, info) => {
        check(args, ctx.viewer);
        return resolve(source, args, ctx, info);
      };
    }
    guardEntity(schema, type);
  }
  return schema;
}

/** An entity type's rules on each `_entities` representation of it, before its reference is read. */
function guardEntity(schema: GraphQLSchema, type: GraphQLObjectType): void {
  const extensions = type.extensions as SubgraphExtensions;
  const resolveReference = extensions.apollo?.subgraph?.resolveReference;
  if (!resolveReference) return;
  const rule = accessRuleOf(schema, type);
  if (!rule) throw new Error(`The entity type ${type.name} has no access rule.`);
  const { row } = rule;
  if (row && !(row.by in type.getFields())) {
    throw new Error(`@rowRule on ${type.name} names no field "${row.by}".`);
  }
  const guarded = (reference: unknown, ctx: GraphQLContext, ...rest: unknown[]) => {
    const refused = fieldRefusal(ctx.viewer, [rule]);
    if (refused) throw refused;
    if (row) {
      const refusedRow = rowRefusal(
        ctx.viewer,
        row,
        (reference as Record<string, unknown>)[row.by],
      );
      if (refusedRow) throw refusedRow;
    }
    return resolveReference(reference, ctx, ...rest);
  };
  type.extensions = {
    ...type.extensions,
    apollo: {
      ...extensions.apollo,
      subgraph: { ...extensions.apollo?.subgraph, resolveReference: guarded },
    },
  };
}
