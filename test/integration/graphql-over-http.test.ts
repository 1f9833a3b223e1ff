/**
 * GraphQL over HTTP (contract §2): the `graphql-http` package's server audits against a real
 * gateway over the sandbox. Every MUST audit is a test of its own; SHOULD and MAY audits are
 * reported (a table on the console) and only asserted to run.
 *
 * The gateway requires a bearer token, so every audit request carries one; that header also
 * satisfies the gateway's CSRF prevention, as it does for any non-browser client.
 */
import { type Audit, type AuditResult, serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
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

// The list of audits does not depend on the URL, which is read only when an audit runs.
const audits: Audit[] = serverAudits({
  url: () => `${gateway.url}/graphql`,
  fetchFn: authorizedFetch,
});
const mustAudits = audits.filter((audit) => audit.name.startsWith('MUST'));
const otherAudits = audits.filter((audit) => !audit.name.startsWith('MUST'));

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

describe('GraphQL over HTTP: MUST audits', () => {
  it('has MUST audits to run', () => {
    expect(mustAudits.length).toBeGreaterThan(10);
  });

  for (const audit of mustAudits) {
    it(`${audit.id} ${audit.name}`, async () => {
      const result = await audit.fn();
      expect(result.status, await explain(result)).toBe('ok');
    });
  }
});

describe('GraphQL over HTTP: SHOULD and MAY audits', () => {
  it('run, and are reported', async () => {
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
    if (failing.length > 0) console.log(`Failing SHOULD/MAY audits:\n  ${failing.join('\n  ')}`);

    expect(results).toHaveLength(otherAudits.length);
  });
});
