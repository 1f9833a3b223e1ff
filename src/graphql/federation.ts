/**
 * The schema as an Apollo Federation v2 subgraph (docs/federation.md), built by
 * `@apollo/subgraph`: from the SDL of schema/ (whose `@link` imports `@key`) it adds the
 * federation definitions, `Query._service { sdl }` and `Query._entities(representations:)`,
 * and calls each entity type's `__resolveReference` (types/Transaction.ts, types/KycUser.ts),
 * which read a record through the very functions `transaction` and `kycUser` use.
 *
 * Two things are added here, around the library's two fields:
 * - `_entities` resolves entity by entity: a representation that is not an object, names no
 *   entity type, or lacks a key field as a string is `BAD_USER_INPUT` at its position, and any
 *   other failure (FORBIDDEN, an upstream error) stays at its position too.
 * - `_service` hands out the whole SDL; when introspection is off (production), only to a
 *   service's token (one with a scope), never to an end user's.
 */
import { buildSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { type GraphQLFieldResolver, type GraphQLSchema, isObjectType, Kind, parse } from 'graphql';
import type { GraphQLContext } from '../context.ts';
import { BadUserInputError, ForbiddenError } from '../errors.ts';
import { enforceAccessRules } from './access.ts';
import type { Resolvers } from './generated/resolvers-types.ts';

export interface SubgraphSchemaOptions {
  typeDefs: readonly string[];
  resolvers: Resolvers;
  /** Whether introspection is answered; when not, `_service` needs a service's token. */
  introspection: boolean;
}

type Resolve = GraphQLFieldResolver<unknown, GraphQLContext, Record<string, unknown>>;

/** The executable schema: every type and resolver of schema/, as a federation subgraph. */
export function buildSubgraph(options: SubgraphSchemaOptions): GraphQLSchema {
  const schema = buildSubgraphSchema([
    {
      typeDefs: parse(options.typeDefs.join('\n')),
      resolvers: withUnsharedReferences(options.resolvers),
    },
  ]);
  // The SDL's access rules, on every field and entity reference (graphql/access.ts).
  enforceAccessRules(schema);
  const fields = schema.getQueryType()?.getFields();
  const entities = fields?._entities;
  const service = fields?._service;
  if (!entities?.resolve || !service?.resolve) {
    throw new Error('The subgraph schema lacks _entities or _service (no @key in schema/?).');
  }
  entities.resolve = entityByEntity(schema, entities.resolve as Resolve);
  if (!options.introspection) service.resolve = forServices(service.resolve as Resolve);
  return schema;
}

/**
 * The resolver map for the library (the generated map is the library's, with precise types),
 * each `__resolveReference` giving a shallow copy of its record: the library marks the object
 * it gets with its `__typename` in place, and records come from the cache shared by requests
 * (frozen outside production).
 */
function withUnsharedReferences(resolvers: Resolvers): GraphQLResolverMap<GraphQLContext> {
  const map = { ...resolvers } as Record<string, Record<string, unknown>>;
  for (const [name, fields] of Object.entries(map)) {
    const resolveReference = fields.__resolveReference;
    if (typeof resolveReference !== 'function') continue;
    map[name] = {
      ...fields,
      __resolveReference: async (...args: unknown[]) => {
        const record: unknown = await resolveReference(...args);
        return typeof record === 'object' && record !== null ? { ...record } : record;
      },
    };
  }
  return map as GraphQLResolverMap<GraphQLContext>;
}

/** The key fields of each entity type, from its `@key(fields: "…")` (plain field names). */
function entityKeys(schema: GraphQLSchema): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type)) continue;
    for (const directive of type.astNode?.directives ?? []) {
      if (directive.name.value !== 'key') continue;
      const fields = directive.arguments?.find((argument) => argument.name.value === 'fields');
      if (fields?.value.kind === Kind.STRING) {
        keys.set(type.name, fields.value.value.trim().split(/\s+/));
      }
    }
  }
  return keys;
}

/**
 * Each representation on its own: its shape checked, then resolved by the library (which calls
 * the type's `__resolveReference`); a refusal or failure is the value at its position, so
 * graphql reports it there and the other positions are answered.
 */
function entityByEntity(schema: GraphQLSchema, resolveEntities: Resolve): Resolve {
  const keys = entityKeys(schema);
  return (source, args, ctx, info) => {
    const representations = args.representations as unknown[];
    return representations.map((representation, index) => {
      try {
        const problem = representationProblem(representation, keys);
        if (problem) return new BadUserInputError(`representations[${index}] ${problem}`);
        const [resolved] = resolveEntities(
          source,
          { representations: [representation] },
          ctx,
          info,
        ) as unknown[];
        // A failure as the position's value rather than a rejection: graphql-jit drops a
        // rejected last item of a list of a union (the list came back one entry short).
        return Promise.resolve(resolved).catch((error: unknown) =>
          error instanceof Error ? error : new Error(String(error)),
        );
      } catch (error) {
        return error;
      }
    });
  };
}

/** What is wrong with a representation, or undefined when it can be resolved. */
function representationProblem(
  representation: unknown,
  keys: ReadonlyMap<string, string[]>,
): string | undefined {
  if (typeof representation !== 'object' || representation === null) {
    return 'must be an object with __typename and the key fields.';
  }
  const fields = representation as Record<string, unknown>;
  const typename = fields.__typename;
  const key = typeof typename === 'string' ? keys.get(typename) : undefined;
  if (!key) return `must name an entity type in __typename (${[...keys.keys()].join(', ')}).`;
  const missing = key.find((field) => typeof fields[field] !== 'string');
  return missing === undefined ? undefined : `must give ${missing} as a string.`;
}

/** `_service` for a service's token only (a token with a scope): end users get FORBIDDEN. */
function forServices(resolveService: Resolve): Resolve {
  return (source, args, ctx, info) => {
    if (ctx.viewer.scopes.size === 0) {
      throw new ForbiddenError(
        'The subgraph SDL (_service) is given to a service token (one with a scope) only.',
      );
    }
    return resolveService(source, args, ctx, info);
  };
}
