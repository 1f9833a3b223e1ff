/**
 * Incremental delivery (src/graphql/incremental.ts), through the pipeline's operation plugin
 * (src/pipeline.ts), in a real Yoga over a small schema whose deferred field fails unexpectedly:
 * the part carries a masked error with a schema code and nothing internal, the request's summary
 * records it, and a client that did not ask for parts gets one masked answer. Also which `Accept`
 * headers ask for parts.
 */

import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.ts';
import { withIncrementalDirectives } from '../../src/graphql/incremental.ts';
import type { RequestSummary } from '../../src/observability/plugin.ts';
import { useOperationExecution } from '../../src/pipeline.ts';
import { streamingType } from '../../src/transports/http.ts';

const yoga = createYoga<{ summary: RequestSummary; parts: boolean; stale: [] }>({
  schema: withIncrementalDirectives(
    createSchema({
      typeDefs: 'type Query { fast: String, broken: String, refused: String }',
      resolvers: {
        Query: {
          fast: () => 'here',
          broken: async () => {
            throw new Error('connect ECONNREFUSED /var/run/internal.sock');
          },
          refused: async () => {
            throw new GatewayError('FORBIDDEN', 'Not yours.');
          },
        },
      },
    }),
  ),
  logging: false,
  maskedErrors: { isDev: false },
  plugins: [useOperationExecution({ maxCost: 1000, production: true })],
});

const QUERY = '{ fast ... @defer { broken } ... @defer(label: "r") { refused } }';

async function ask(accept: string, summary: RequestSummary): Promise<string> {
  const response = await yoga.fetch(
    'http://yoga/graphql',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query: QUERY }),
    },
    // As the operation entry sets it: parts when the transport frames them (from Accept here).
    { summary, parts: streamingType(accept) !== undefined, stale: [] },
  );
  return response.text();
}

describe('errors inside deferred parts', () => {
  it('are masked and coded in the parts, and recorded for the log line', async () => {
    const summary: RequestSummary = { id: 'test', codes: [] };
    const body = await ask('multipart/mixed', summary);
    expect(body).not.toContain('ECONNREFUSED');
    expect(body).not.toContain('internal.sock');
    expect(body).not.toContain('"unexpected"');
    const parts = [...body.matchAll(/^\{.*\}$/gm)].map(([json]) => JSON.parse(json));
    const errors = parts.flatMap((part) =>
      (part.incremental ?? []).flatMap((item: { errors?: unknown[] }) => item.errors ?? []),
    );
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          message: 'Unexpected error.',
          path: ['broken'],
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        }),
        expect.objectContaining({
          message: 'Not yours.',
          path: ['refused'],
          extensions: { code: 'FORBIDDEN' },
        }),
      ]),
    );
    expect(summary.codes.sort()).toEqual(['FORBIDDEN', 'INTERNAL_SERVER_ERROR']);
  });

  it('are masked in the one answer of a client that did not ask for parts', async () => {
    const body = JSON.parse(await ask('application/json', { id: 'test', codes: [] }));
    expect(body.data).toEqual({ fast: 'here', broken: null, refused: null });
    expect(JSON.stringify(body)).not.toContain('ECONNREFUSED');
    expect(body.errors.map((e: { path: string[] }) => e.path[0]).sort()).toEqual([
      'broken',
      'refused',
    ]);
  });
});

describe('streamingType: which transport frames the answer in parts', () => {
  it.each([
    ['multipart/mixed;deferSpec=20220824,application/graphql-response+json', 'multipart'],
    ['text/event-stream', 'sse'],
    ['application/json, multipart/mixed;q=0.5', 'multipart'],
    ['application/json, multipart/mixed;q=0', undefined],
    ['text/event-stream;q=0, multipart/mixed', 'multipart'],
    ['application/graphql-response+json,application/json;q=0.9', undefined],
    ['*/*', undefined],
    ['', undefined],
  ])('Accept %s: %s', (accept, expected) => {
    expect(streamingType(accept)).toBe(expected);
  });
});
