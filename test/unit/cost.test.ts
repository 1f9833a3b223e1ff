import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { operationCost } from '../../src/graphql/hardening.ts';

describe('operationCost', () => {
  it('follows the variables of each request when a list length comes from one', () => {
    const document = parse(
      'query Q($refs: [ID!]! = ["NT-A"]) { transactions(txRefs: $refs) { txRef status } }',
    );
    const few = operationCost(document, 'Q', { refs: ['NT-A', 'NT-B'] });
    const many = operationCost(document, 'Q', {
      refs: Array.from({ length: 20 }, (_, i) => `NT-${i}`),
    });
    const byDefault = operationCost(document, 'Q', {});
    expect(many).toBe(few * 10);
    expect(byDefault).toBe(few / 2);
    // A single reference is coerced to a list of one.
    expect(operationCost(document, 'Q', { refs: 'NT-A' })).toBe(byDefault);
  });

  it('gives the same cost every time for an operation whose lists are written out', () => {
    const document = parse(
      'query T($ref: ID!) { transaction(txRef: $ref) { txRef } transactions(txRefs: ["NT-A", "NT-B"]) { txRef } }',
    );
    const first = operationCost(document, 'T', { ref: 'NT-A' });
    expect(operationCost(document, 'T', { ref: 'NT-B' })).toBe(first);
    expect(operationCost(document, null, {})).toBe(first);
  });
});
