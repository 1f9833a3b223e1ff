/**
 * `@defer` and `@stream` against a real gateway over real HTTP, in front of the sandbox, whose
 * `usr_kyc_slow` and `NT-SLOW001` answer after a set delay: Apollo Client 4's `@defer` support
 * (docs/clients.md's recipe, run as written there), the raw `multipart/mixed` answer, graphql-sse
 * in both modes, and the whole answer at once for every request that did not ask for parts.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { gql, type SandboxGateway, startSandboxGateway } from '../helpers/gateway.ts';

/** The sandbox's delay for its slow references: long enough to tell the parts apart. */
const SLOW_MS = 2000;
/** The first part comes at least this much earlier than the slow one (a loaded machine's margin). */
const EARLIER_MS = 800;

let setup: SandboxGateway;
const WORK = join(process.cwd(), 'test-results', `incremental-${process.pid}`);
beforeAll(async () => {
  // Nothing cached, so that each test waits for the slow answers again; a cost limit that two
  // lists of 100 references exceed.
  setup = await startSandboxGateway(
    { CACHE_TTL_KYC_SECONDS: '0', CACHE_TTL_FINAL_SECONDS: '0', LIMIT_COST: '500' },
    { slowMs: SLOW_MS },
  );
  // A first request, so that no timed one pays for the gateway's warm-up.
  await gql(setup.gateway, '{ gatewayInfo { version } }', {}, setup.token);
  mkdirSync(WORK, { recursive: true });
});
afterAll(async () => {
  rmSync(WORK, { recursive: true, force: true });
  await setup.close();
});

const PAYMENT_THEN_SLOW_KYC = `
  query PaymentThenKyc($txRef: ID!, $userRef: ID!) {
    transaction(txRef: $txRef) { txRef status }
    ... @defer(label: "kyc") { kycUser(userRef: $userRef) { userRef verified } }
  }
`;
const VARIABLES = { txRef: 'NT-SUCCESS001', userRef: 'usr_kyc_slow' };

/** The parts of PAYMENT_THEN_SLOW_KYC, in the order they are sent. */
const DEFERRED_PARTS = [
  { data: { transaction: { txRef: 'NT-SUCCESS001', status: 'SUCCESSFUL' } }, hasNext: true },
  {
    incremental: [
      {
        data: { kycUser: { userRef: 'usr_kyc_slow', verified: false } },
        path: [],
        label: 'kyc',
      },
    ],
    hasNext: false,
  },
];

/** The first part did not wait for the KYC service; the deferred one did. */
function expectDeferredTiming(first: number | undefined, last: number | undefined): void {
  expect(first).toBeLessThan(SLOW_MS - EARLIER_MS);
  expect(last).toBeGreaterThanOrEqual(SLOW_MS - 50);
  expect((last ?? 0) - (first ?? 0)).toBeGreaterThan(EARLIER_MS);
}

/**
 * Runs the TypeScript block marked `test=<id>` in docs/clients.md: its imports at the top of a
 * module, the rest the body of `run(url, token, console)`; returns what it printed, each line
 * with the milliseconds since the start.
 */
async function runDocBlock(id: string, token: string): Promise<Array<[number, ...unknown[]]>> {
  const doc = readFileSync(join(process.cwd(), 'docs/clients.md'), 'utf8');
  const found = [...doc.matchAll(/^```ts test=(\S+)\n([\s\S]*?)^```$/gm)].find(
    ([, name]) => name === id,
  );
  if (!found?.[2]) throw new Error(`docs/clients.md has no block marked test=${id}`);
  const code = found[2];
  const imports = code.match(/^import [\s\S]*?from '[^']+';$/gm) ?? [];
  let body = code;
  for (const statement of imports) body = body.replace(statement, '');
  const file = join(WORK, `${id}.ts`);
  writeFileSync(
    file,
    `${imports.join('\n')}\nexport default async function run(url: string, token: string, ` +
      `console: { log: (...values: unknown[]) => void }): Promise<void> {\n${body}\n}\n`,
  );
  const module = (await import(pathToFileURL(file).href)) as {
    default: (url: string, token: string, log: { log: (...v: unknown[]) => void }) => Promise<void>;
  };
  const printed: Array<[number, ...unknown[]]> = [];
  const started = performance.now();
  await module.default(`${setup.gateway.url}/graphql`, token, {
    log: (...values) => printed.push([performance.now() - started, ...values]),
  });
  return printed;
}

/** One part of a multipart answer as it arrived. */
interface TimedPart {
  ms: number;
  body: Record<string, unknown>;
}

/** Posts a document and reads a `multipart/mixed` answer part by part, timing each. */
async function multipart(
  query: string,
  variables: Record<string, unknown>,
  token: string,
): Promise<{ status: number; type: string; parts: TimedPart[] }> {
  const started = performance.now();
  const response = await fetch(`${setup.gateway.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'multipart/mixed;deferSpec=20220824, application/json;q=0.9',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query, variables }),
  });
  const type = response.headers.get('content-type') ?? '';
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1] ?? '-';
  const parts: TimedPart[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = response.body?.getReader();
  for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
    buffer += decoder.decode(read.value, { stream: true });
    // A part is complete when the next delimiter has arrived.
    let end = buffer.indexOf(`\r\n--${boundary}`, 1);
    while (end !== -1) {
      const part = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const json = part.split('\r\n\r\n')[1];
      if (json?.trim()) parts.push({ ms: performance.now() - started, body: JSON.parse(json) });
      end = buffer.indexOf(`\r\n--${boundary}`, 1);
    }
  }
  return { status: response.status, type, parts };
}

describe('Apollo Client 4 over multipart HTTP', () => {
  it("runs docs/clients.md's @defer recipe: the payment at once, the slow KYC details after", async () => {
    const printed = await runDocBlock('apollo-defer', setup.token);
    expect(printed.map(([, ...values]) => values)).toEqual([
      ['streaming', 'SUCCESSFUL', null],
      ['complete', 'SUCCESSFUL', 'usr_kyc_slow'],
    ]);
    const [first, last] = printed.map(([ms]) => ms);
    expectDeferredTiming(first, last);
  });
});

describe('multipart/mixed on the wire', () => {
  it('sends the first part before the deferred one has been resolved', async () => {
    const { status, type, parts } = await multipart(PAYMENT_THEN_SLOW_KYC, VARIABLES, setup.token);
    expect(status).toBe(200);
    expect(type).toMatch(/^multipart\/mixed/);
    expect(parts.map((part) => part.body)).toEqual(DEFERRED_PARTS);
    expectDeferredTiming(parts[0]?.ms, parts[1]?.ms);
  });

  it('streams the items of a list with @stream, each when it is read', async () => {
    const { parts } = await multipart(
      `query Streamed($txRefs: [ID!]!) {
        transactions(txRefs: $txRefs) @stream(initialCount: 1) { txRef status }
      }`,
      { txRefs: ['NT-FAILED001', 'NT-SLOW001'] },
      setup.token,
    );
    expect(parts.map((part) => part.body)).toEqual([
      { data: { transactions: [{ txRef: 'NT-FAILED001', status: 'FAILED' }] }, hasNext: true },
      {
        incremental: [
          { items: [{ txRef: 'NT-SLOW001', status: 'SUCCESSFUL' }], path: ['transactions', 1] },
        ],
        hasNext: false,
      },
    ]);
    expect(parts[0]?.ms).toBeLessThan(SLOW_MS - EARLIER_MS);
    expect(parts[1]?.ms).toBeGreaterThanOrEqual(SLOW_MS - 50);
  });

  it('refuses a negative @stream initialCount, literal or variable, as BAD_USER_INPUT', async () => {
    const literal = `query Negative($txRefs: [ID!]!) {
      transactions(txRefs: $txRefs) @stream(initialCount: -1) { txRef }
    }`;
    const variable = `query NegativeVar($txRefs: [ID!]!, $n: Int!) {
      transactions(txRefs: $txRefs) @stream(initialCount: $n) { txRef }
    }`;
    const txRefs = ['NT-FAILED001'];
    for (const [query, variables] of [
      [literal, { txRefs }],
      [variable, { txRefs, n: -3 }],
    ] as const) {
      const { errors, data } = await gql(setup.gateway, query, variables, setup.token);
      expect(data ?? null).toBeNull();
      expect(errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT' } })]);
    }
  });

  it("puts a deferred field's refusal in its part, with its code and path, nothing internal", async () => {
    // An end user's token reads its own KYC only: another user's is FORBIDDEN, no upstream call.
    const endUser = await setup.gateway.token({ sub: 'usr_demo_tier1', scope: null });
    const before = setup.sandbox.requests.length;
    const { parts } = await multipart(
      `query Mixed {
        gatewayInfo { version }
        ... @defer { kycUser(userRef: "usr_demo_tier2") { userRef } }
      }`,
      {},
      endUser,
    );
    expect(setup.sandbox.requests.length).toBe(before);
    expect(parts[0]?.body).toMatchObject({ data: { gatewayInfo: {} }, hasNext: true });
    const incremental = (parts[1]?.body.incremental ?? []) as Array<Record<string, unknown>>;
    expect(incremental).toHaveLength(1);
    expect(incremental[0]?.data).toEqual({ kycUser: null });
    const errors = incremental[0]?.errors as Array<{
      path: unknown;
      extensions: Record<string, unknown>;
    }>;
    expect(errors.map((error) => [error.path, error.extensions])).toEqual([
      [['kycUser'], { code: 'FORBIDDEN' }],
    ]);
  });
});

describe('Server-Sent Events', () => {
  for (const singleConnection of [false, true]) {
    it(`sends each part as an event (graphql-sse, ${singleConnection ? 'single connection' : 'distinct connections'})`, async () => {
      const client = createSseClient({
        url: `${setup.gateway.url}/graphql`,
        headers: { authorization: `Bearer ${setup.token}` },
        singleConnection,
        retryAttempts: 0,
      });
      const started = performance.now();
      const events: Array<{ ms: number; result: unknown }> = [];
      try {
        for await (const result of client.iterate({
          query: PAYMENT_THEN_SLOW_KYC,
          variables: VARIABLES,
        })) {
          events.push({ ms: performance.now() - started, result });
        }
      } finally {
        client.dispose();
      }
      expect(events.map((event) => event.result)).toEqual(DEFERRED_PARTS);
      expectDeferredTiming(events[0]?.ms, events[1]?.ms);
    });
  }
});

describe('a client that did not ask for parts', () => {
  // A user the sandbox answers at once: what matters here is one answer holding every part.
  const VARIABLES = { txRef: 'NT-SUCCESS001', userRef: 'usr_demo_tier1' };
  const WHOLE = {
    transaction: { txRef: 'NT-SUCCESS001', status: 'SUCCESSFUL' },
    kycUser: { userRef: 'usr_demo_tier1', verified: false },
  };

  for (const accept of ['application/graphql-response+json', 'application/json', '*/*']) {
    it(`gets the whole answer at once for a POST accepting ${accept}`, async () => {
      const response = await gql(setup.gateway, PAYMENT_THEN_SLOW_KYC, VARIABLES, setup.token, {
        accept,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/json/);
      expect(response.errors).toBeUndefined();
      expect(response.data).toEqual(WHOLE);
      expect(response).not.toHaveProperty('hasNext');
    });
  }

  it('gets the whole answer at once over GET', async () => {
    const url = new URL(`${setup.gateway.url}/graphql`);
    url.searchParams.set('query', PAYMENT_THEN_SLOW_KYC);
    url.searchParams.set('variables', JSON.stringify(VARIABLES));
    const response = await fetch(url, {
      headers: { accept: 'application/json', authorization: `Bearer ${setup.token}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: WHOLE });
  });

  it('gets the whole answer in one message over WebSocket (graphql-ws)', async () => {
    const client = createWsClient({
      url: `${setup.gateway.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${setup.token}` },
      retryAttempts: 0,
    });
    const results: unknown[] = [];
    try {
      for await (const result of client.iterate({
        query: PAYMENT_THEN_SLOW_KYC,
        variables: VARIABLES,
      })) {
        results.push(result);
      }
    } finally {
      await client.dispose();
    }
    expect(results).toEqual([{ data: WHOLE }]);
  });

  it('keeps a deferred refusal at its path in the whole answer', async () => {
    const endUser = await setup.gateway.token({ sub: 'usr_demo_tier1', scope: null });
    const response = await gql(
      setup.gateway,
      `{ ... @defer { kycUser(userRef: "usr_demo_tier2") { userRef } } }`,
      {},
      endUser,
    );
    expect(response.data).toEqual({ kycUser: null });
    expect(response.errors?.map((error) => [error.path, error.extensions?.code])).toEqual([
      [['kycUser'], 'FORBIDDEN'],
    ]);
  });
});

describe('limits and rules', () => {
  it('counts @defer against the directive limit', async () => {
    const fragments = Array.from(
      { length: 51 },
      (_, index) => `... @defer(label: "l${index}") { gatewayInfo { version } }`,
    ).join(' ');
    const response = await gql(setup.gateway, `{ ${fragments} }`, {}, setup.token);
    expect(response.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(response.data).toBeUndefined();
  });

  it('counts the references of a deferred list against the cost limit, before any upstream call', async () => {
    const before = setup.sandbox.requests.length;
    const txRefs = Array.from({ length: 100 }, (_, index) => `NT-COST${index}`);
    const response = await gql(
      setup.gateway,
      `query Costly($txRefs: [ID!]!) {
        ... @defer { transactions(txRefs: $txRefs) { txRef status } }
        ... @defer { again: transactions(txRefs: $txRefs) { txRef status } }
      }`,
      { txRefs },
      setup.token,
    );
    expect(response.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(setup.sandbox.requests.length).toBe(before);
  });

  it("refuses what the incremental-delivery rules forbid (a mutation's root, @stream on a non-list)", async () => {
    for (const query of [
      'mutation { ... @defer { verifyTransaction(txRef: "NT-SUCCESS001") { status } } }',
      '{ transaction(txRef: "NT-SUCCESS001") @stream(initialCount: 0) { status } }',
      '{ a: transactions(txRefs: ["NT-SUCCESS001"]) @defer { status } }',
    ]) {
      const response = await gql(setup.gateway, query, {}, setup.token);
      expect(response.errors?.[0]?.extensions?.code, query).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(response.data, query).toBeUndefined();
    }
  });
});
