import { parse } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { operationCost } from '../../src/graphql/hardening.ts';
import type { RequestSummary } from '../../src/observability/plugin.ts';
import { useOperationExecution } from '../../src/pipeline.ts';

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

describe('the cost limit of a subscription', () => {
  // The operation plugin (src/pipeline.ts) in a real Yoga, over a schema whose subscription
  // field reads one record per reference, as `transactions` does.
  let subscribed = 0;
  const yoga = createYoga<{ summary: RequestSummary }>({
    schema: createSchema({
      typeDefs: `type Query { x: Int }
        type Subscription { transactions(txRefs: [ID!]!): String }`,
      resolvers: {
        Subscription: {
          transactions: {
            subscribe: async function* () {
              subscribed += 1;
              yield { transactions: 'one' };
            },
          },
        },
      },
    }),
    logging: false,
    plugins: [useOperationExecution({ maxCost: 5, production: false })],
  });
  const subscribe = (refs: string[], summary: RequestSummary) => {
    const enveloped = yoga.getEnveloped({ summary });
    return enveloped.subscribe({
      schema: enveloped.schema,
      document: parse('subscription S($refs: [ID!]!) { transactions(txRefs: $refs) }'),
      variableValues: { refs },
      contextValue: enveloped.contextFactory(),
    });
  };

  it('refuses one over the limit before it subscribes, and names nothing', async () => {
    const summary: RequestSummary = { id: 'test', codes: [] };
    const result = (await subscribe(['NT-1', 'NT-2', 'NT-3', 'NT-4', 'NT-5', 'NT-6'], summary)) as {
      errors?: ReadonlyArray<{ message: string; extensions: unknown }>;
    };
    expect(result.errors?.map(({ message, extensions }) => ({ message, extensions }))).toEqual([
      {
        message: 'The operation exceeds the cost limit of 5.',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      },
    ]);
    expect(subscribed).toBe(0);
    expect(summary.operation).toBeUndefined();
  });

  it('subscribes to one within it, named in the request summary', async () => {
    const summary: RequestSummary = { id: 'test', codes: [] };
    const stream = (await subscribe(['NT-1', 'NT-2'], summary)) as AsyncIterable<unknown>;
    const events: unknown[] = [];
    for await (const event of stream) events.push(event);
    expect(events).toEqual([{ data: { transactions: 'one' } }]);
    expect(subscribed).toBe(1);
    expect(summary).toMatchObject({ operation: 'S', operationType: 'subscription' });
  });
});
