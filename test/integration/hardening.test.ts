/**
 * Abuse limits, browser safety, production mode, trusted documents and rate limits, each
 * through HTTP against a real gateway, each with "no upstream call" checked where it matters.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../sandbox/index.ts';
import { UNCHECKED_VIEWER } from '../../src/auth.ts';
import { Businesses, SINGLE_BUSINESS_ID } from '../../src/businesses/registry.ts';
import { TransactionDocument, TransactionsDocument } from '../../src/client/generated/graphql.ts';
import type { ContextDeps } from '../../src/context.ts';
import { loadTrustedDocuments } from '../../src/graphql/persisted.ts';
import { LiveMessages } from '../../src/live/messages.ts';
import { LiveHub } from '../../src/live/status-hub.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { GatewayMetrics } from '../../src/observability/metrics.ts';
import { MemoryClaimStore } from '../../src/payments/claims.ts';
import { PaymentConfirmations } from '../../src/payments/confirmation.ts';
import { createGateway } from '../../src/server.ts';
import { memoryState } from '../../src/state/index.ts';
import { advanceWallClock } from '../helpers/clock.ts';
import {
  codesOf,
  dataOf,
  type GraphQLResponse,
  gql,
  sandboxUpstreams,
  startGateway,
  startSandboxGateway,
  type TestGateway,
  withoutUpstreamCall,
} from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
let token: string;

let close: () => Promise<void>;
beforeAll(async () => {
  ({ sandbox, gateway, token, close } = await startSandboxGateway());
});
afterAll(() => close());

const noUpstreamCall = <T>(action: () => Promise<T>): Promise<T> =>
  withoutUpstreamCall(sandbox, action);

function refused(response: GraphQLResponse<unknown>): void {
  expect(response.data ?? null).toBeNull();
  expect(codesOf(response).length).toBeGreaterThan(0);
  for (const code of codesOf(response)) expect(code).toBe('GRAPHQL_VALIDATION_FAILED');
}

const ask = (query: string, variables: Record<string, unknown> = {}, target = gateway) =>
  noUpstreamCall(() => gql(target, query, variables, token));

describe('operation limits (their defaults)', () => {
  it('depth: 12 levels pass validation of depth, 13 are refused', async () => {
    // Depth is counted on the document, so an invalid deep selection still shows the rule.
    const nest = (n: number) => `${'card { '.repeat(n)}last4${' }'.repeat(n)}`;
    const deep = await ask(`{ transaction(txRef: "NT-X1") { ${nest(13)} } }`);
    expect(JSON.stringify(deep.errors)).toMatch(/depth/i);
    refused(deep);
  });

  it('aliases: 30 pass, 31 are refused, also when hidden in a fragment', async () => {
    const aliases = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: version`).join(' ');
    const thirty = (await ask(`{ gatewayInfo { ${aliases(30)} } }`)) as GraphQLResponse<{
      gatewayInfo: Record<string, string>;
    }>;
    expect(dataOf(thirty).gatewayInfo).toHaveProperty('a29');
    refused(await ask(`{ gatewayInfo { ${aliases(31)} } }`));
    refused(
      await ask(`query { gatewayInfo { ...F } } fragment F on GatewayInfo { ${aliases(31)} }`),
    );
  });

  it('aliases: a fragment spread in many places counts each time', async () => {
    const fragment = `fragment F on Transaction { ${Array.from({ length: 8 }, (_, i) => `f${i}: txRef`).join(' ')} }`;
    const spreads = Array.from(
      { length: 5 },
      (_, i) => `t${i}: transaction(txRef: "NT-A${i}") { ...F }`,
    ).join(' ');
    refused(await ask(`{ ${spreads} } ${fragment}`));
  });

  it('directives: 50 pass, 51 are refused', async () => {
    const with_ = (n: number) => `{ gatewayInfo { ${'version @include(if: true) '.repeat(n)} } }`;
    const ok = await ask(with_(50));
    expect(codesOf(ok)).not.toContain('GRAPHQL_VALIDATION_FAILED');
    refused(await ask(with_(51)));
  });

  it('tokens: a document over 5000 tokens is refused', async () => {
    const padding = Array.from({ length: 2600 }, () => 'version').join(' ');
    refused(await ask(`{ gatewayInfo { ${padding} } }`));
  });

  it('document size: over 64 KB is refused before parsing', async () => {
    const comment = `# ${'x'.repeat(66_000)}\n`;
    refused(await ask(`${comment}{ gatewayInfo { version } }`));
  });

  it('body size: over 1 MB is refused with 413, and a body without length with 411', async () => {
    const big = JSON.stringify({
      query: '{ gatewayInfo { version } }',
      variables: { pad: 'x'.repeat(1_100_000) },
    });
    const tooBig = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: big,
    });
    expect(tooBig.status).toBe(413);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"query":"{ gatewayInfo { version } }"}'));
        controller.close();
      },
    });
    const chunked = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(411);
  });

  it('root fields: 21 are refused, fragments included', async () => {
    const fields = (n: number) =>
      Array.from({ length: n }, (_, i) => `r${i}: gatewayInfo { sandbox }`).join(' ');
    expect(codesOf(await ask(`{ ${fields(20)} }`))).toEqual([]);
    refused(
      await ask(
        `{ ${fields(10)} ...F } fragment F on Query { ${fields(11).replaceAll('r', 's')} }`,
      ),
    );
  });

  it('cost: transactions counts its references, given inline or by variable', async () => {
    const refs = Array.from({ length: 100 }, (_, i) => `NT-COST${i}`);
    const full = print(TransactionDocument).replace(
      'transaction(txRef: $txRef)',
      'transactions(txRefs: $refs)',
    );
    const twice = full
      .replace('query Transaction($txRef: ID!) {', 'query Twice($refs: [ID!]!) {')
      .replace(
        /transactions\(txRefs: \$refs\) \{\n\s+\.\.\.TransactionFields\n\s+\}/,
        (m) => `a: ${m} b: ${m}`,
      );
    refused(await ask(twice, { refs }));
    // One list of 100 with every field fits.
    const once_ = full.replace('query Transaction($txRef: ID!) {', 'query Once($refs: [ID!]!) {');
    const response = await gql(gateway, once_, { refs: refs.slice(0, 3) }, token);
    expect(codesOf(response)).not.toContain('GRAPHQL_VALIDATION_FAILED');
  });

  it('recursive fragments are refused without crashing', async () => {
    refused(await ask('query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }'));
    refused(
      await ask(
        'query { transaction(txRef: "NT-A1") { ...C } } fragment C on Transaction { card { ...D } } fragment D on Card { ...D }',
      ),
    );
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
  });

  it('every request error carries a contract code', async () => {
    const raw = async (body: string, type = 'application/json') => {
      const response = await fetch(`${gateway.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': type, authorization: `Bearer ${token}` },
        body,
      });
      return (await response.json()) as GraphQLResponse<unknown>;
    };
    expect(codesOf(await raw('not json'))).toEqual(['GRAPHQL_PARSE_FAILED']);
    const empty = await raw('{}');
    expect(codesOf(empty)).toEqual(['GRAPHQL_PARSE_FAILED']);
    expect(empty.errors?.[0]?.message).toMatch(/query/i);
    expect(codesOf(await raw('{"query":"{ transaction(txRef: "}'))).toEqual([
      'GRAPHQL_PARSE_FAILED',
    ]);
    expect(JSON.stringify(await raw('not json'))).not.toContain('originalError');
  });
});

describe('browser safety', () => {
  // What protects against cross-site requests: a page can send, without a CORS preflight, a
  // GET or a POST of a form or plain text, and no Authorization header. The gateway refuses a
  // request without a bearer token (401) and reads an operation only from a GET or from a JSON
  // POST — a type a page cannot send cross-site without the preflight CORS answers — so a
  // simple cross-site POST is refused whatever it carries (415), the token included.
  it('refuses the requests a page can send cross-site without a preflight', async () => {
    const url = `${gateway.url}/graphql?query=${encodeURIComponent('{ gatewayInfo { version } }')}`;
    const plain = await fetch(url, { headers: { accept: 'application/json' } });
    expect(plain.status).toBe(401);
    const simpleTypes = {
      'application/x-www-form-urlencoded': `query=${encodeURIComponent('{ gatewayInfo { version } }')}`,
      'text/plain': JSON.stringify({ query: '{ gatewayInfo { version } }' }),
      'multipart/form-data; boundary=x': `--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n{ gatewayInfo { version } }\r\n--x--\r\n`,
    };
    for (const [type, body] of Object.entries(simpleTypes)) {
      for (const authorization of [undefined, `Bearer ${token}`]) {
        const response = await fetch(`${gateway.url}/graphql`, {
          method: 'POST',
          headers: {
            'content-type': type,
            accept: 'application/json',
            ...(authorization && { authorization }),
          },
          body,
        });
        expect({ type, authorization, status: response.status }).toEqual({
          type,
          authorization,
          status: authorization ? 415 : 401,
        });
      }
    }
    const withToken = await fetch(url, {
      headers: { accept: 'application/json', authorization: `Bearer ${token}` },
    });
    expect(withToken.status).toBe(200);
  });

  it('never runs a mutation over GET', async () => {
    const query = encodeURIComponent(
      'mutation { verifyTransaction(txRef: "NT-SUCCESS001") { txRef } }',
    );
    const response = await noUpstreamCall(() =>
      fetch(`${gateway.url}/graphql?query=${query}`, {
        headers: { accept: 'application/json', authorization: `Bearer ${token}` },
      }),
    );
    expect(response.status).toBe(405);
  });

  it('does not batch', async () => {
    const response = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify([
        { query: '{ gatewayInfo { version } }' },
        { query: '{ gatewayInfo { version } }' },
      ]),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
  });

  it('sends no CORS headers by default, and only for listed origins when configured', async () => {
    const preflight = (target: TestGateway, origin: string) =>
      fetch(`${target.url}/graphql`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
    const closed = await preflight(gateway, 'https://evil.example');
    expect(closed.headers.get('access-control-allow-origin')).toBeNull();
    const open = await startGateway(sandboxUpstreams(sandbox), {
      CORS_ORIGINS: 'https://app.example',
    });
    try {
      const allowed = await preflight(open, 'https://app.example');
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
      const other = await preflight(open, 'https://evil.example');
      expect(other.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
    } finally {
      await open.close();
    }
  });
});

describe('production mode', () => {
  let prod: TestGateway;
  beforeAll(async () => {
    prod = await startGateway(sandboxUpstreams(sandbox), { NODE_ENV: 'production' });
  });
  afterAll(() => prod.close());

  it('turns introspection, GraphiQL and field suggestions off', async () => {
    const introspection = await gql(prod, '{ __schema { types { name } } }', {}, token);
    expect(introspection.data ?? null).toBeNull();
    expect(codesOf(introspection).length).toBeGreaterThan(0);
    for (const code of codesOf(introspection)) expect(code).toBe('GRAPHQL_VALIDATION_FAILED');
    const page = await fetch(`${prod.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toContain('GraphiQL');
    const typo = await gql(prod, '{ transactoin(txRef: "NT-A1") { txRef } }', {}, token);
    expect(JSON.stringify(typo)).not.toMatch(/Did you mean/);
    const devTypo = await gql(gateway, '{ transactoin(txRef: "NT-A1") { txRef } }', {}, token);
    expect(JSON.stringify(devTypo)).toMatch(/Did you mean/);
  });

  it('does not state limit values in production', async () => {
    const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: version`).join(' ');
    const response = await gql(prod, `{ gatewayInfo { ${aliases} } }`, {}, token);
    refused(response);
    expect(JSON.stringify(response.errors)).not.toMatch(/\b30\b|\b31\b/);
    const dev = await gql(gateway, `{ gatewayInfo { ${aliases} } }`, {}, token);
    expect(JSON.stringify(dev.errors)).toMatch(/\b30\b/);
  });
});

describe('error masking', () => {
  it.each(['production', 'development'])(
    'masks an unexpected error under NODE_ENV=%s, credentials and stack included',
    async (mode) => {
      const previous = process.env.NODE_ENV;
      process.env.NODE_ENV = mode;
      const secretish = 'http://svc:PAYMENT-SECRET-123@10.0.0.1/pg/api';
      const failing = {
        transaction: () => Promise.reject(new Error(`connect ECONNREFUSED ${secretish}`)),
        kycUser: () => Promise.reject(new TypeError(`bad ${secretish}`)),
      };
      const live = new LiveHub(
        {
          sources: failing,
          settings: {
            pollMs: 1000,
            maxPollMs: 1000,
            maxWatchMs: 1000,
            heartbeatMs: 1000,
            maxPerCaller: 10,
          },
        },
        memoryState(),
        new LiveMessages(undefined, () => {}),
      );
      const context: ContextDeps = {
        sources: failing,
        settings: {
          upstreamTimeZone: 'UTC',
          sdk: { scriptUrl: 'http://x/sdk.js', publicKey: 'pk', businessSlug: 'b' },
          maxBatchSize: 100,
          maxRecordsPerRequest: 100,
          sandbox: false,
          version: 'test',
        },
        live,
        confirmations: new PaymentConfirmations(new MemoryClaimStore(60_000), () => {}),
      };
      const account = {
        id: SINGLE_BUSINESS_ID,
        paymentAccessToken: 't',
        kycSecretKey: 'k',
        kycPublicKey: 'pk',
        kycBusinessSlug: 'b',
        webhookSecrets: [],
      };
      const built = createGateway({
        businesses: new Businesses([account], false, () => ({
          id: SINGLE_BUSINESS_ID,
          context,
          webhooks: undefined,
          removed: new AbortController().signal,
          update: () => {},
          close: () => live.close(),
        })),
        authenticate: async () => UNCHECKED_VIEWER,
        graphiql: false,
        metrics: new GatewayMetrics(),
        logger: createLogger({ level: 'silent', redactPaths: [] }),
        readiness: async () => ({ ready: true, reasons: [] }),
        hardening: {
          limits: {
            depth: 12,
            aliases: 30,
            directives: 50,
            tokens: 5000,
            documentBytes: 65536,
            bodyBytes: 1048576,
            rootFields: 20,
            cost: 5000,
            fragments: 32,
            documentCacheBytes: 1_000_000,
            requestTimeoutMs: 30_000,
          },
          production: mode === 'production',
          introspection: true,
          trustedDocuments: 'allow',
        },
        corsOrigins: [],
        rateLimiter: { take: () => ({ allowed: true, retryAfterSeconds: 0 }) },
        persistedStore: { get: async () => undefined, register: async () => false },
        close: async () => {},
      });
      const server = built.createServer();
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const response = await gql({ url }, TransactionsDocument, { txRefs: ['NT-A1'] }, null);
        const kyc = await gql({ url }, '{ kycUser(userRef: "u") { level } }', {}, null);
        for (const r of [response, kyc]) {
          expect(codesOf(r)).toEqual(['INTERNAL_SERVER_ERROR']);
          expect(r.errors?.[0]?.message).toBe('Unexpected error.');
          const text = JSON.stringify(r);
          expect(text).not.toContain('SECRET');
          expect(text).not.toContain('ECONNREFUSED');
          expect(text).not.toMatch(/\bat .*\.ts:\d+/);
        }
      } finally {
        server.closeAllConnections();
        server.close();
        process.env.NODE_ENV = previous;
      }
    },
  );
});

describe('trusted documents', () => {
  const hashOf = (operation: string): string => {
    for (const [hash, text] of loadTrustedDocuments()) {
      if (text.includes(`query ${operation}(`)) return hash;
    }
    throw new Error(`no trusted document named ${operation}`);
  };
  const byId = (target: TestGateway, body: Record<string, unknown>) =>
    fetch(`${target.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }).then(
      async (r) => (await r.json()) as GraphQLResponse<{ transaction: { txRef: string } | null }>,
    );

  it('accepts a known document by its id, in both id forms, and others as usual by default', async () => {
    const hash = hashOf('Transaction');
    const variables = { txRef: 'NT-SUCCESS001' };
    expect((await byId(gateway, { documentId: hash, variables })).data?.transaction?.txRef).toBe(
      'NT-SUCCESS001',
    );
    const apq = await byId(gateway, {
      variables,
      extensions: { persistedQuery: { version: 1, sha256Hash: hash.replace('sha256:', '') } },
    });
    expect(apq.data?.transaction?.txRef).toBe('NT-SUCCESS001');
    expect(dataOf(await gql(gateway, '{ gatewayInfo { version } }', {}, token))).toBeTruthy();
  });

  it('accepts only known ids when set to "only"', async () => {
    const strict = await startGateway(sandboxUpstreams(sandbox), { TRUSTED_DOCUMENTS: 'only' });
    try {
      const known = await byId(strict, {
        documentId: hashOf('Transaction'),
        variables: { txRef: 'NT-SUCCESS001' },
      });
      expect(known.data?.transaction?.txRef).toBe('NT-SUCCESS001');
      const before = sandbox.requests.length;
      const text = await gql(strict, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token);
      expect(codesOf(text)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
      const unknown = await byId(strict, { documentId: `sha256:${'0'.repeat(64)}`, variables: {} });
      expect(codesOf(unknown)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
      expect(sandbox.requests.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});

describe('rate limiting', () => {
  it('limits each caller to its burst, says when to retry, and leaves others alone', async () => {
    const limited = await startGateway(sandboxUpstreams(sandbox), {
      SERVICE_RATE_LIMIT_RPS: '1',
      SERVICE_RATE_LIMIT_BURST: '3',
    });
    try {
      const alice = await limited.token({ sub: 'alice' });
      const bob = await limited.token({ sub: 'bob' });
      const query = '{ gatewayInfo { version } }';
      for (let i = 0; i < 3; i++) dataOf(await gql(limited, query, {}, alice));
      const before = sandbox.requests.length;
      const over = await gql(limited, TransactionDocument, { txRef: 'NT-SUCCESS001' }, alice);
      expect(over.status).toBe(429);
      expect(codesOf(over)).toEqual(['RATE_LIMITED']);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(sandbox.requests.length).toBe(before);
      dataOf(await gql(limited, query, {}, bob));
      advanceWallClock(1100);
      dataOf(await gql(limited, query, {}, alice));
    } finally {
      await limited.close();
    }
  });
});
