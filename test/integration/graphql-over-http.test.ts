/**
 * GraphQL over HTTP: the `graphql-http` package's server audits against a real
 * gateway over the sandbox. Every MUST audit is a test of its own; SHOULD and MAY audits are
 * reported (a table on the console) and only asserted to run.
 *
 * The gateway requires a bearer token, so every audit request carries one.
 */
import { type Audit, type AuditResult, serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
let token: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  gateway = await startGateway(sandboxUpstreams(sandbox), { UPSTREAM_TIMEOUT_MS: '800' });
  token = await gateway.token();
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.close();
});

/** `fetch` with the bearer token added to every request (whatever form its headers take). */
const authorizedFetch = (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers, signal: AbortSignal.timeout(5000) });
};

/** The reason of a failed audit, with the start of the response body for context. */
async function explain(result: AuditResult): Promise<string> {
  if (result.status === 'ok') return 'ok';
  let body = '';
  try {
    body = (await result.response.clone().text()).slice(0, 300);
  } catch {
    body = '(body unreadable)';
  }
  return `${result.reason} (HTTP ${result.response.status}: ${body})`;
}

describe('GraphQL over HTTP', () => {
  // The list of audits does not depend on the URL, which is read only when an audit runs.
  const audits: Audit[] = serverAudits({
    url: () => `${gateway.url}/graphql`,
    fetchFn: authorizedFetch,
  });
  const mustAudits = audits.filter((audit) => audit.name.startsWith('MUST'));
  const otherAudits = audits.filter((audit) => !audit.name.startsWith('MUST'));

  it('has MUST audits to run', () => {
    expect(mustAudits.length).toBeGreaterThan(10);
  });

  for (const audit of mustAudits) {
    it(`${audit.id} ${audit.name}`, async () => {
      const result = await audit.fn();
      expect(result.status, await explain(result)).toBe('ok');
    });
  }

  it('passes every SHOULD and MAY audit too', async () => {
    const results: AuditResult[] = [];
    for (const audit of otherAudits) results.push(await audit.fn());

    const rows: Record<string, { ok: number; notice: number; warn: number; error: number }> = {};
    const failing: string[] = [];
    for (const result of results) {
      const level = result.name.split(' ', 1)[0] ?? '?';
      rows[level] ??= { ok: 0, notice: 0, warn: 0, error: 0 };
      rows[level][result.status] += 1;
      if (result.status !== 'ok')
        failing.push(`${result.id} ${result.name}: ${await explain(result)}`);
    }
    console.table(rows);
    expect(results).toHaveLength(otherAudits.length);
    expect(failing).toEqual([]);
  });
});

describe('content negotiation', () => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'application/json'],
    ['*/*', 'application/json'],
    ['application/json', 'application/json'],
    ['application/graphql-response+json', 'application/graphql-response+json'],
    [
      'application/graphql-response+json, application/json;q=0.9, */*;q=0.8',
      'application/graphql-response+json',
    ],
    [
      'application/json;q=0.9, application/graphql-response+json',
      'application/graphql-response+json',
    ],
    ['application/graphql-response+json;q=0.5, application/json', 'application/json'],
    ['application/*;q=0.5, application/graphql-response+json;q=0.1', 'application/json'],
  ];
  it.each(cases)('Accept %s → %s', async (accept, expected) => {
    const response = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        ...(accept !== undefined && { accept }),
      },
      body: JSON.stringify({ query: '{ gatewayInfo { version } }' }),
    });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(`${expected}; charset=utf-8`);
  });
});

describe('variables that do not coerce', () => {
  const query = 'query One($txRef: ID!) { transaction(txRef: $txRef) { txRef } }';
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an object for an ID', { txRef: { a: 1 } }, 'Variable "$txRef" got invalid value { a: 1 }'],
    [
      'a missing required variable',
      {},
      'Variable "$txRef" of required type "ID!" was not provided.',
    ],
    [
      'null for a non-null type',
      { txRef: null },
      'Variable "$txRef" of non-null type "ID!" must not be null.',
    ],
  ];
  it.each(cases)(
    '%s: 400, the variable named, its location given, no upstream call',
    async (_, variables, message) => {
      const calls = sandbox.requests.length;
      const response = await fetch(`${gateway.url}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as {
        data?: unknown;
        errors: Array<{ message: string; locations?: unknown; extensions?: { code?: string } }>;
      };
      expect(response.status).toBe(400);
      expect(body.data).toBeUndefined();
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]?.message).toContain(message);
      expect(body.errors[0]?.locations).toEqual([{ line: 1, column: 11 }]);
      expect(body.errors[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(sandbox.requests.length).toBe(calls);
    },
  );
});
