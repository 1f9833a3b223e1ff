/**
 * `transactionStatus` over Server-Sent Events (GraphQL over SSE, graphql-sse's distinct connections), against the
 * sandbox's pending reference that turns successful.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { until } from '../helpers/eventually.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';

let sandbox: Sandbox;
let gateway: TestGateway;

beforeAll(async () => {
  sandbox = await startSandbox({ pendingSeconds: 1 });
  // One token opens 20 streams below: more than a caller may hold by default.
  gateway = await startGateway(sandboxUpstreams(sandbox), {
    LIVE_POLL_MS: '200',
    LIVE_MAX_PER_CALLER: '50',
  });
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

/** Opens the stream and collects `next` payloads until the server completes it. */
async function subscribe(txRef: string, token: string) {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      query:
        'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { txRef status succeeded } }',
      variables: { txRef },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const text = await response.text();
  const events = text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const event = /^event: (\w+)/m.exec(block)?.[1] ?? 'message';
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      return { event, data: data ? (JSON.parse(data) as Record<string, unknown>) : null };
    });
  return events;
}

it('emits PENDING at once, then SUCCESSFUL, then completes', async () => {
  const txRef = `NT-PENDING${Date.now()}`;
  const started = performance.now();
  const events = await subscribe(txRef, await gateway.token());
  const payloads = events.filter((e) => e.event === 'next' || e.event === 'message');
  expect(payloads.map((e) => e.data)).toEqual([
    { data: { transactionStatus: { txRef, status: 'PENDING', succeeded: false } } },
    { data: { transactionStatus: { txRef, status: 'SUCCESSFUL', succeeded: true } } },
  ]);
  expect(performance.now() - started).toBeLessThan(5000);
  // Polls went to the upstream (not the cache), a few of them, not one per millisecond.
  const polls = sandbox.requests.filter((r) => r.path.endsWith(`/${txRef}`)).length;
  expect(polls).toBeGreaterThanOrEqual(2);
  expect(polls).toBeLessThan(15);
});

it('ends at once for a final transaction', async () => {
  const events = await subscribe('NT-FAILED001', await gateway.token());
  const payloads = events.filter((e) => e.event === 'next' || e.event === 'message');
  expect(payloads).toHaveLength(1);
  expect(payloads[0]?.data).toMatchObject({ data: { transactionStatus: { status: 'FAILED' } } });
});

it('is refused without the transactions:read scope', async () => {
  const events = await subscribe('NT-FAILED001', await gateway.token({ scope: 'kyc:read' }));
  expect(JSON.stringify(events)).toContain('FORBIDDEN');
  expect(JSON.stringify(events)).not.toContain('"status":"FAILED"');
});

it('polls once per interval for many subscribers of one reference (one poller per process)', async () => {
  const txRef = `NT-PENDINGMANY${Date.now()}`;
  const token = await gateway.token();
  const started = performance.now();
  const all = await Promise.all(Array.from({ length: 20 }, () => subscribe(txRef, token)));
  const elapsed = performance.now() - started;
  for (const events of all) {
    const payloads = events.filter((e) => e.event === 'next' || e.event === 'message');
    expect(payloads.map((e) => e.data)).toEqual([
      { data: { transactionStatus: { txRef, status: 'PENDING', succeeded: false } } },
      { data: { transactionStatus: { txRef, status: 'SUCCESSFUL', succeeded: true } } },
    ]);
  }
  // About the watch time over the 200 ms interval, plus the first read: not 20 times that.
  const polls = sandbox.requests.filter((r) => r.path.endsWith(`/${txRef}`)).length;
  expect(polls).toBeLessThanOrEqual(Math.ceil(elapsed / 200) + 2);
});

it('ends with a clear error at the watch limit, and stops polling', async () => {
  const slow = await startSandbox({ pendingSeconds: 60 });
  const limited = await startGateway(sandboxUpstreams(slow), {
    LIVE_POLL_MS: '200',
    LIVE_MAX_WATCH_SECONDS: '1',
  });
  try {
    const txRef = `NT-PENDINGLONG${Date.now()}`;
    const started = performance.now();
    const response = await fetch(`${limited.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${await limited.token()}`,
      },
      body: JSON.stringify({
        query: 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { status } }',
        variables: { txRef },
      }),
      signal: AbortSignal.timeout(5000),
    });
    const text = await response.text();
    expect(performance.now() - started).toBeLessThan(2500);
    expect(text).toContain('"status":"PENDING"');
    expect(text).toContain('UPSTREAM_TIMEOUT');
    expect(text).toContain('did not reach a final status within the watch time');
    // The watch is over: no poller is left, and the count of polls stands.
    await until(async () => (await metric(limited, 'gateway_live_pollers')) === 0, 3000);
    const polls = slow.requests.filter((r) => r.path.endsWith(`/${txRef}`)).length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(slow.requests.filter((r) => r.path.endsWith(`/${txRef}`)).length).toBe(polls);
  } finally {
    await limited.close();
    await slow.close();
  }
});
