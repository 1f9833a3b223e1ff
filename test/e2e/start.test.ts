/**
 * `npm start` as a newcomer runs it: a real process in sandbox mode, its printed URL and token,
 * GraphiQL, a query, a clean exit on SIGTERM; and one clear line for a bad setting.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import { metric } from '../helpers/metrics.ts';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Environment without any gateway setting, as on a fresh machine. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  return { ...env, ...extra };
}

function startMain(extra: Record<string, string>) {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: cleanEnv(extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return { child, out: () => stdout, err: () => stderr };
}

async function waitFor(
  read: () => string,
  pattern: RegExp,
  ms = 15_000,
): Promise<RegExpMatchArray> {
  const until = Date.now() + ms;
  for (;;) {
    const match = read().match(pattern);
    if (match) return match;
    if (Date.now() > until) throw new Error(`timed out waiting for ${pattern}; output:\n${read()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('npm start in sandbox mode', () => {
  it('serves GraphiQL and the demo data with the printed token, and exits 0 on SIGTERM', async () => {
    const started = performance.now();
    const main = startMain({ PORT: '0' });
    const [, url] = await waitFor(
      main.out,
      /serving GraphQL at (http:\/\/127\.0\.0\.1:\d+\/graphql)/,
    );
    const [, ms] = await waitFor(main.out, /Ready in (\d+) ms/);
    const [, token] = await waitFor(main.out, /Authorization: Bearer (\S+)/);
    expect(Number(ms)).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(10_000);
    if (!url || !token) throw new Error('no url or token printed');

    const page = await fetch(url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('GraphiQL');
    expect(html).toContain(token);

    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        query:
          '{ transaction(txRef: "NT-SUCCESS001") { status amount } kycUser(userRef: "usr_demo_tier3") { level verified } }',
      }),
    });
    expect(await response.json()).toEqual({
      data: {
        transaction: { status: 'SUCCESSFUL', amount: 15000.5 },
        kycUser: { level: 3, verified: true },
      },
    });
    const health = await fetch(new URL('/healthz', url));
    expect(health.status).toBe(200);
    const ready = await fetch(new URL('/readyz', url));
    expect(ready.status).toBe(200);

    main.child.kill('SIGTERM');
    const [code] = await once(main.child, 'exit');
    expect(code).toBe(0);
    expect(main.err()).toBe('');
  });

  it('on SIGTERM finishes the request in flight, refuses new ones, and exits 0', async () => {
    const main = startMain({ PORT: '0', SANDBOX_SLOW_MS: '1500' });
    const [, url] = await waitFor(
      main.out,
      /serving GraphQL at (http:\/\/127\.0\.0\.1:\d+\/graphql)/,
    );
    const [, token] = await waitFor(main.out, /Authorization: Bearer (\S+)/);
    if (!url || !token) throw new Error('no url or token printed');
    const inFlight = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ transaction(txRef: "NT-SLOW001") { txRef status } }' }),
    });
    // SIGTERM while the request is in flight (NT-SLOW001 takes a while upstream).
    await until(
      async () =>
        (await metric({ url: new URL(url).origin }, 'gateway_graphql_requests_in_flight')) === 1,
      5000,
    );
    main.child.kill('SIGTERM');
    const stopped = performance.now();
    await waitFor(main.out, /shutting down/);
    const refused = await fetch(new URL('/healthz', url)).then(
      () => 'served',
      () => 'refused',
    );
    expect(refused).toBe('refused');
    const response = await inFlight;
    expect(await response.json()).toEqual({
      data: { transaction: { txRef: 'NT-SLOW001', status: 'SUCCESSFUL' } },
    });
    const [code] = await once(main.child, 'exit');
    expect(code).toBe(0);
    // Well before the 10 s grace period: nothing was left hanging.
    expect(performance.now() - stopped).toBeLessThan(4000);
  });

  it('with METRICS_PORT, serves /metrics on that port only', async () => {
    const main = startMain({ PORT: '0', METRICS_PORT: '0' });
    const [, url] = await waitFor(
      main.out,
      /serving GraphQL at (http:\/\/127\.0\.0\.1:\d+)\/graphql/,
    );
    const [, metricsUrl] = await waitFor(main.out, /Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/);
    if (!url || !metricsUrl) throw new Error('no url printed');
    expect(new URL(metricsUrl).port).not.toBe(new URL(url).port);
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    const metrics = await fetch(metricsUrl);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('gateway_graphql_requests_total');
    // The probes stay on the API port; the metrics port serves nothing else.
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect((await fetch(new URL('/readyz', metricsUrl))).status).toBe(404);
    main.child.kill('SIGTERM');
    const [code] = await once(main.child, 'exit');
    expect(code).toBe(0);
  });

  it.each([
    ['PORT', 'abc'],
    ['UPSTREAM_TIMEOUT_MS', 'soon'],
    ['PAYMENT_API_URL', 'not a url'],
    ['UPSTREAM_TIME_ZONE', 'Mars/Olympus'],
  ])('stops with one line naming %s when it is wrong', async (variable, value) => {
    const main = startMain({ [variable]: value });
    const [code] = await once(main.child, 'exit');
    expect(code).toBe(1);
    const lines = main.err().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
  });

  it('never prints a secret setting in its error line', async () => {
    const main = startMain({
      PAYMENT_API_URL: 'http://127.0.0.1:9',
      KYC_API_URL: 'http://127.0.0.1:9',
      PAYMENT_ACCESS_TOKEN: 'tok-SECRET-123',
      KYC_SECRET_KEY: 'sk-SECRET-456',
      KYC_PUBLIC_KEY: 'pk',
      KYC_BUSINESS_SLUG: 'biz',
      KYC_SDK_SCRIPT_URL: 'http://127.0.0.1:9/sdk.js',
      AUTH_JWT_SECRET: 'short-SECRET',
    });
    const [code] = await once(main.child, 'exit');
    expect(code).toBe(1);
    expect(main.err()).toContain('AUTH_JWT_SECRET');
    expect(main.err() + main.out()).not.toMatch(/SECRET-|short-SECRET/);
  });
});
