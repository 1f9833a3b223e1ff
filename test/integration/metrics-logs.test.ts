/**
 * What operators read: request durations by operation type with subscriptions apart, a /metrics
 * that `promtool check metrics` accepts, the request id on the upstream call and on every log line
 * of its request, and a warning at start for a mistyped setting.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { transactionBody } from '../helpers/fixture.ts';
import { byRef, setup } from '../helpers/fixture-gateway.ts';
import { gql } from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';
import { runToExit } from '../helpers/processes.ts';

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((path) => existsSync(path));
const inCi = process.env.CI === 'true';
const skipPromtool = !PROMTOOL && !inCi;
if (skipPromtool) {
  console.warn(
    '[metrics] SKIPPED: promtool is absent, so /metrics was not checked by it. Install it with ' +
      '`apt-get install -y prometheus` (CI installs it, and fails without it).',
  );
}

/** Opens a subscription to `txRef`'s status over SSE and reads the stream to its end. */
async function subscribeToEnd(
  url: string,
  token: string,
  txRef: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${token}`,
      ...headers,
    },
    body: JSON.stringify({
      query: 'subscription S($txRef: ID!) { transactionStatus(txRef: $txRef) { status } }',
      variables: { txRef },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  return response.text();
}

describe('request durations', () => {
  it('are by operation type, and a subscription stream is timed apart', async () => {
    const { gateway, token } = await setup(byRef);
    const name = 'gateway_graphql_request_duration_seconds_count';
    await gql(gateway, 'query Q { transaction(txRef: "NT-DUR1") { status } }', {}, token);
    await gql(gateway, 'mutation M { refreshKycUser(userRef: "usr_dur") { verified } }', {}, token);
    // Refused before an operation was known: no type.
    await gql(gateway, '{ transaction(txRef: "NT-DUR2") { status } }', {}, null);
    // The fixture's record is final: the stream sends it and completes.
    const stream = await subscribeToEnd(gateway.url, token, 'NT-DUR3');
    expect(stream).toContain('transactionStatus');

    expect(await metric(gateway, name, { operation_type: 'query' })).toBe(1);
    expect(await metric(gateway, name, { operation_type: 'mutation' })).toBe(1);
    expect(await metric(gateway, name, { operation_type: 'none' })).toBe(1);
    expect(await metric(gateway, name, { operation_type: 'subscription' })).toBe(0);
    expect(await metric(gateway, name)).toBe(3);
    expect(await metric(gateway, 'gateway_graphql_subscription_duration_seconds_count')).toBe(1);
  });
});

describe('/metrics', () => {
  it.skipIf(skipPromtool)('passes promtool check metrics', async () => {
    if (!PROMTOOL) throw new Error('promtool is absent in CI: .ci/run installs prometheus');
    const { gateway, token } = await setup((request) =>
      request.path.endsWith('NT-DOWN') ? { status: 503 } : byRef(request, 0),
    );
    // Every family with samples: requests ok and failed, upstream calls and retries, cache.
    await gql(gateway, '{ transaction(txRef: "NT-PROM1") { status } }', {}, token);
    await gql(gateway, '{ transaction(txRef: "NT-PROM1") { status } }', {}, token);
    await gql(gateway, '{ transaction(txRef: "NT-DOWN") { status } }', {}, token);
    await subscribeToEnd(gateway.url, token, 'NT-PROM2');
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).not.toMatch(/^nodejs_active_\w+_total/m);
    expect(text).toMatch(/^nodejs_active_handles\{/m);

    const child = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stdin.end(text);
    const [code] = (await once(child, 'close')) as [number | null];
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});

describe('x-request-id', () => {
  it('goes to the upstream and onto every log line of its request, failures included', async () => {
    const logLines: string[] = [];
    const { gateway, token, payment } = await setup(
      (request) =>
        request.path.endsWith('NT-RIDDOWN') ? { status: 503 } : { body: transactionBody() },
      { logLines, env: { UPSTREAM_MAX_ATTEMPTS: '2' } },
    );
    const response = await gql(
      gateway,
      'query Two { a: transaction(txRef: "NT-RIDOK") { status } b: transaction(txRef: "NT-RIDDOWN") { status } }',
      {},
      token,
      { 'x-request-id': 'req-rid-42' },
    );
    expect(JSON.stringify(response.errors)).toContain('UPSTREAM_UNAVAILABLE');
    // Both references, the failing one twice: each call carried the id.
    expect(payment.requests.length).toBeGreaterThanOrEqual(3);
    for (const request of payment.requests) {
      expect(request.headers['x-request-id']).toBe('req-rid-42');
    }
    const failed = logLines.filter((line) => line.includes('upstream call failed'));
    expect(failed.length).toBe(2);
    for (const line of failed) expect(JSON.parse(line)).toMatchObject({ requestId: 'req-rid-42' });
    const summary = logLines.find((line) => line.includes('"graphql request"'));
    expect(JSON.parse(summary ?? '{}')).toMatchObject({ requestId: 'req-rid-42' });
    // Another request's id does not leak onto lines written outside any request.
    await gql(gateway, '{ transaction(txRef: "NT-RIDDOWN") { status } }', {}, token);
    const ids = logLines
      .filter((line) => line.includes('upstream call failed'))
      .map((line) => (JSON.parse(line) as { requestId?: string }).requestId);
    expect(ids.slice(2).every((id) => id !== undefined && id !== 'req-rid-42')).toBe(true);
  });
});

describe('x-request-id and shared work', () => {
  it('is not sent by the live-status poller a subscriber started, which serves every subscriber', async () => {
    let calls = 0;
    const { gateway, token, payment } = await setup(
      () => {
        calls += 1;
        // Pending for the subscriber's own reads, then settled on a later poll.
        return {
          body: transactionBody(
            { txStatus: calls < 4 ? 'PENDING' : 'SUCCESSFUL', txIsSucces: calls >= 4 },
            calls < 4 ? 'PAYMENT_PENDING' : 'PAYMENT_SUCCESSFUL',
          ),
        };
      },
      { env: { LIVE_POLL_MS: '100' } },
    );
    const stream = await subscribeToEnd(gateway.url, token, 'NT-LIVE1', {
      'x-request-id': 'req-live-1',
    });
    expect(stream).toContain('SUCCESSFUL');
    const ids = payment.requests.map((request) => request.headers['x-request-id']);
    // The subscriber's own reads carry its id; the poller's do not.
    expect(ids[0]).toBe('req-live-1');
    expect(ids.length).toBeGreaterThanOrEqual(4);
    expect(ids.at(-1)).toBeUndefined();
    expect(ids.filter((id) => id === 'req-live-1').length).toBeLessThan(ids.length);
  });
});

describe('a mistyped setting', () => {
  it('is named at start with the setting it resembles, never with its value', async () => {
    const run = await runToExit({
      PORT: '0',
      CACHE_ULR: 'redis://user:hunter2@127.0.0.1:6379',
      AUTH_JWT_SECRETS: 'a-secret-that-must-not-be-printed',
    });
    const printed = run.stdout + run.stderr;
    expect(printed).toContain('Warning: CACHE_ULR is not a setting; did you mean CACHE_URL?');
    expect(printed).toContain(
      'Warning: AUTH_JWT_SECRETS is not a setting; did you mean AUTH_JWT_SECRET?',
    );
    expect(printed).not.toContain('hunter2');
    expect(printed).not.toContain('a-secret-that-must-not-be-printed');
    // It started all the same (sandbox mode), and was stopped once it served.
    expect(run.stdout).toContain('serving GraphQL');
  });
});
