import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function parse(value: unknown): string {
  if (typeof value !== 'string' || !ISO.test(value) || Number.isNaN(Date.parse(value))) {
    throw new GraphQLError('DateTime must be an ISO 8601 instant with an offset.', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  return new Date(value).toISOString();
}

/** ISO 8601 instants. Resolvers hand it strings already in ISO form (see model/time.ts). */
export const DateTime = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  serialize: (value) => {
    if (value instanceof Date) return value.toISOString();
    if (typeof value === 'string') return value;
    throw new GraphQLError('DateTime cannot represent this value.');
  },
  parseValue: parse,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) {
      throw new GraphQLError('DateTime must be a string.', {
        extensions: { code: 'BAD_USER_INPUT' },
      });
    }
    return parse(ast.value);
  },
});
