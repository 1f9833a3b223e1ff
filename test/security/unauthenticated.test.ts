/**
 * What a caller without a valid token can make the gateway do: nothing but a 401. The token is
 * checked from the headers before the body is read, parsed or validated, so no document, however
 * costly, is worked on or kept, and nothing the caller names reaches a metric label.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../sandbox/index.ts';
import {
  codesOf,
  gql,
  startSandboxGateway,
  type TestGateway,
  withoutUpstreamCall,
} from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
let token: string;

let close: () => Promise<void>;
beforeAll(async () => {
  ({ sandbox, gateway, token, close } = await startSandboxGateway({
    DOCUMENT_CACHE_BYTES: '1000000',
  }));
});
afterAll(() => close());

const typenameAliases = (n: number, salt = '') =>
  `query Q${salt} { ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`;
/** Each fragment spreads the previous one twice: expanded, 2^n selections. */
const fragmentChain = (n: number) =>
  `query { gatewayInfo { ...F${n} } } fragment F0 on GatewayInfo { version } ${Array.from(
    { length: n },
    (_, i) => `fragment F${i + 1} on GatewayInfo { ...F${i} ...F${i} }`,
  ).join(' ')}`;

const COSTLY_DOCUMENTS: Record<string, string> = {
  valid: '{ transaction(txRef: "NT-SUCCESS001") { txRef customer { email } } }',
  'syntax error': '{ transaction(txRef: ',
  'over the token limit': `{ ${'gatewayInfo { version } '.repeat(1500)} }`,
  '1,600 __typename aliases': typenameAliases(1600),
  '200-fragment chain': fragmentChain(200),
};

describe('without a valid token', () => {
  it.each(Object.entries(COSTLY_DOCUMENTS))(
    'a POST with a %s document is 401 UNAUTHENTICATED, with no upstream call',
    async (_label, document) => {
      for (const bearer of [null, `${token.slice(0, -4)}AAAA`, 'not-a-jwt']) {
        const response = await withoutUpstreamCall(sandbox, () =>
          gql(gateway, document, {}, bearer),
        );
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
        expect(codesOf(response)).toEqual(['UNAUTHENTICATED']);
        expect(response.data).toBeUndefined();
      }
    },
  );

  it('a GET is 401 UNAUTHENTICATED too (not a CSRF refusal)', async () => {
    const query = encodeURIComponent(COSTLY_DOCUMENTS['syntax error'] ?? '');
    const response = await fetch(`${gateway.url}/graphql?query=${query}`, {
      headers: { accept: 'application/graphql-response+json' },
    });
    expect(response.status).toBe(401);
    const body = (await response.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(body.errors.map((e) => e.extensions.code)).toEqual(['UNAUTHENTICATED']);
  });

  it('parses nothing and keeps nothing: 300 documents of 1,600 aliases leave no trace', async () => {
    const before = await metric(gateway, 'gateway_documents_total');
    for (let i = 0; i < 300; i++) {
      const response = await gql(gateway, typenameAliases(1600, String(i)), {}, null);
      expect(response.status).toBe(401);
    }
    expect(await metric(gateway, 'gateway_documents_total')).toBe(before);
    expect(await metric(gateway, 'gateway_document_cache_bytes')).toBe(0);
  });

  it('names no metric label after an operation it sent', async () => {
    for (let i = 0; i < 205; i++) {
      await gql(gateway, `query Probe${i} { gatewayInfo { version } }`, {}, null);
    }
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).not.toMatch(/Probe\d+/);
  });
});

describe('with a valid token, documents that fail', () => {
  it('are refused before execution and never kept', async () => {
    const before = await metric(gateway, 'gateway_documents_total', { outcome: 'refused' });
    for (let i = 0; i < 50; i++) {
      const response = await withoutUpstreamCall(sandbox, () =>
        gql(gateway, typenameAliases(1600, String(i)), {}, token),
      );
      expect(codesOf(response)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    }
    expect(await metric(gateway, 'gateway_documents_total', { outcome: 'refused' })).toBe(
      before + 50,
    );
    expect(await metric(gateway, 'gateway_document_cache_bytes')).toBe(0);
  });

  it('name no metric label either', async () => {
    for (let i = 0; i < 205; i++) {
      await gql(gateway, `query Invalid${i} { noSuchField }`, {}, token);
    }
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).not.toMatch(/Invalid\d+/);
  });

  it('a chain of fragments is refused by the fragment limit', async () => {
    const response = await withoutUpstreamCall(sandbox, () =>
      gql(gateway, fragmentChain(200), {}, token),
    );
    expect(codesOf(response)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(JSON.stringify(response.errors)).toMatch(/fragment/i);
  });
});

describe('documents that validate', () => {
  it('are prepared once, and the cache stays within its byte bound', async () => {
    const document = (i: number) =>
      `query Kept${i} { gatewayInfo { ${Array.from({ length: 20 }, (_, j) => `v${j}: version`).join(' ')} } }`;
    const prepared = () => metric(gateway, 'gateway_documents_total', { outcome: 'prepared' });
    const cached = () => metric(gateway, 'gateway_documents_total', { outcome: 'cached' });
    const [p0, c0] = [await prepared(), await cached()];
    await gql(gateway, document(0), {}, token);
    await gql(gateway, document(0), {}, token);
    expect([(await prepared()) - p0, (await cached()) - c0]).toEqual([1, 1]);
    for (let i = 1; i < 400; i++) await gql(gateway, document(i), {}, token);
    const bytes = await metric(gateway, 'gateway_document_cache_bytes');
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(1_000_000);
  });

  it('are not prepared a second time when the JSON transport leaves the request to Yoga', async () => {
    const prepared = () => metric(gateway, 'gateway_documents_total', { outcome: 'prepared' });
    const refused = () => metric(gateway, 'gateway_documents_total', { outcome: 'refused' });
    const cached = () => metric(gateway, 'gateway_documents_total', { outcome: 'cached' });
    const before = [await prepared(), await refused(), await cached()];
    // Variables that do not coerce: the JSON transport prepares, then leaves it to Yoga.
    const response = await gql(
      gateway,
      'query Once($ref: ID!) { transaction(txRef: $ref) { txRef } }',
      { ref: { not: 'an id' } },
      token,
    );
    expect(response.status).toBe(400);
    expect(codesOf(response).length).toBe(1);
    // A document that does not validate: refused once, by whichever path saw it first.
    await gql(gateway, 'query Twice { noSuchField }', {}, token);
    const after = [await prepared(), await refused(), await cached()];
    expect(after.map((value, i) => value - (before[i] ?? 0))).toEqual([1, 1, 0]);
  });
});
