/**
 * Limits an authenticated caller cannot slip past: list arguments counted however they are
 * given (a variable's default included), `__typename` aliases, fragment definitions, and the
 * token limit refused as a limit in production too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import {
  codesOf,
  gql,
  sandboxUpstreams,
  startGateway,
  type TestGateway,
  withoutUpstreamCall,
} from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
let production: TestGateway;
let token: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  gateway = await startGateway(sandboxUpstreams(sandbox), { LIMIT_COST: '100' });
  production = await startGateway(sandboxUpstreams(sandbox), { GATEWAY_PRODUCTION: 'true' });
  token = await gateway.token();
});
afterAll(async () => {
  await gateway.close();
  await production.close();
  await sandbox.close();
});

const refs = (n: number) => Array.from({ length: n }, (_, i) => `"NT-COST${i}"`).join(', ');

function refusedWithoutCall(target: TestGateway, query: string, variables = {}) {
  return withoutUpstreamCall(sandbox, async () => {
    const response = await gql(target, query, variables, token);
    expect(codesOf(response)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(response.data ?? null).toBeNull();
    return response;
  });
}

describe('cost counts list arguments however they are given', () => {
  // 60 references × (1 + 1 field) = 120 > 100.
  it('inline', async () => {
    await refusedWithoutCall(gateway, `{ transactions(txRefs: [${refs(60)}]) { txRef } }`);
  });

  it('through a variable', async () => {
    await refusedWithoutCall(gateway, 'query($r: [ID!]!) { transactions(txRefs: $r) { txRef } }', {
      r: Array.from({ length: 60 }, (_, i) => `NT-COST${i}`),
    });
  });

  it("through a variable's default value", async () => {
    await refusedWithoutCall(
      gateway,
      `query($r: [ID!]! = [${refs(60)}]) { transactions(txRefs: $r) { txRef } }`,
    );
  });

  it('a small default passes', async () => {
    const response = await gql(
      gateway,
      'query($r: [ID!]! = ["NT-SUCCESS001"]) { transactions(txRefs: $r) { txRef } }',
      {},
      token,
    );
    expect(response.errors).toBeUndefined();
  });
});

describe('aliases and fragments', () => {
  const typename = (n: number) =>
    `{ ${Array.from({ length: n }, (_, i) => `t${i}: __typename`).join(' ')} }`;

  it('aliases of __typename count against the alias limit', async () => {
    expect((await gql(gateway, typename(30), {}, token)).errors).toBeUndefined();
    await refusedWithoutCall(gateway, typename(31));
  });

  it('at most 32 fragment definitions', async () => {
    const fragments = (n: number) =>
      `query { gatewayInfo { ...F0 } } ${Array.from(
        { length: n },
        (_, i) => `fragment F${i} on GatewayInfo { version ${i + 1 < n ? `...F${i + 1}` : ''} }`,
      ).join(' ')}`;
    expect((await gql(gateway, fragments(32), {}, token)).errors).toBeUndefined();
    const response = await refusedWithoutCall(gateway, fragments(33));
    expect(JSON.stringify(response.errors)).toMatch(/fragment limit of 32/);
  });
});

describe('in production', () => {
  it('the token limit is a validation refusal, and does not state its value', async () => {
    const response = await refusedWithoutCall(
      production,
      `{ ${'gatewayInfo { version } '.repeat(1500)} }`,
    );
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.errors)).not.toMatch(/5000|5,000/);
  });

  it('the fragment limit does not state its value either', async () => {
    const many = `query { gatewayInfo { version } } ${Array.from(
      { length: 40 },
      (_, i) => `fragment F${i} on GatewayInfo { version }`,
    ).join(' ')}`;
    const response = await refusedWithoutCall(production, many);
    expect(JSON.stringify(response.errors)).not.toMatch(/32/);
  });
});

describe('large variables', () => {
  it('900 KB of unused variables are answered and keep nothing; past the body limit, 413', async () => {
    const padding = 'x'.repeat(900 * 1024);
    const cached = async () => {
      const text = await (await fetch(`${gateway.url}/metrics`)).text();
      return Number(/^gateway_document_cache_bytes (\d+)/m.exec(text)?.[1]);
    };
    const before = await cached();
    for (let i = 0; i < 20; i++) {
      const response = await gql(
        gateway,
        'query Big { gatewayInfo { version } }',
        { unused: `${padding}${i}` },
        token,
      );
      expect(response.status).toBe(200);
      expect(response.errors).toBeUndefined();
    }
    // The document is kept once (a few KB); the variables never are.
    expect((await cached()) - before).toBeLessThan(10_000);
    const over = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        query: '{ gatewayInfo { version } }',
        variables: { x: 'y'.repeat(1_100_000) },
      }),
    });
    expect(over.status).toBe(413);
  });
});
