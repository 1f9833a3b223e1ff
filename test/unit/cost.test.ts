import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSubgraph } from '../../src/graphql/federation.ts';
import { operationCost } from '../../src/graphql/hardening.ts';
import { resolvers } from '../../src/graphql/resolvers/index.ts';
import { loadTypeDefs } from '../../src/pipeline.ts';

const schema = buildSubgraph({ typeDefs: loadTypeDefs(), resolvers, introspection: true });

describe('operationCost', () => {
  it('follows the variables of each request when a list length comes from one', () => {
    const document = parse(
      'query Q($refs: [ID!]! = ["NT-A"]) { transactions(txRefs: $refs) { txRef status } }',
    );
    const few = operationCost(schema, document, 'Q', { refs: ['NT-A', 'NT-B'] });
    const many = operationCost(schema, document, 'Q', {
      refs: Array.from({ length: 20 }, (_, i) => `NT-${i}`),
    });
    const byDefault = operationCost(schema, document, 'Q', {});
    expect(many).toBe(few * 10);
    expect(byDefault).toBe(few / 2);
  });

  it('gives the same cost every time for an operation whose lists are written out', () => {
    const document = parse(
      'query T($ref: ID!) { transaction(txRef: $ref) { txRef } transactions(txRefs: ["NT-A", "NT-B"]) { txRef } }',
    );
    const first = operationCost(schema, document, 'T', { ref: 'NT-A' });
    expect(operationCost(schema, document, 'T', { ref: 'NT-B' })).toBe(first);
    expect(operationCost(schema, document, null, {})).toBe(first);
  });
});
