import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const DECIMAL = /^-?\d+(\.\d+)?$/;

function parse(value: unknown): string {
  if (typeof value !== 'string' || !DECIMAL.test(value)) {
    throw new GraphQLError('Decimal must be a string such as "1500.50".', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  return value;
}

/**
 * Exact decimals as JSON strings. Resolvers hand it the text already written out (see
 * model/money.ts); a number is refused rather than written, since it may already be rounded.
 */
export const DecimalScalar = new GraphQLScalarType<string, string>({
  name: 'Decimal',
  serialize: (value) => {
    if (typeof value === 'string' && DECIMAL.test(value)) return value;
    throw new GraphQLError('Decimal cannot represent this value.');
  },
  parseValue: parse,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) {
      throw new GraphQLError('Decimal must be a string.', {
        extensions: { code: 'BAD_USER_INPUT' },
      });
    }
    return parse(ast.value);
  },
});
