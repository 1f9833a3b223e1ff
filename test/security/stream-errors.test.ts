/**
 * An error inside a subscription is that protocol's error event, the stream
 * ends cleanly, and the process keeps serving. Before, graphql-sse's single-connection mode let
 * the error reject its stream's pull: nothing handled it and the gateway exited. Each error a
 * stream can meet is driven over every streaming transport, on the wire and through the real
 * graphql-sse client.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { collect } from '../helpers/subscriptions.ts';
import { runOver, type Transport } from '../helpers/transports.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onRejection);
  sandbox = await startSandbox({ pendingSeconds: 30 });
  gateway = await startGateway(sandboxUpstreams(sandbox), {
    LIVE_POLL_MS: '200',
    LIVE_MAX_PER_CALLER: '1',
    GATEWAY_PRODUCTION: 'true',
  });
});
afterAll(async () => {
  process.off('unhandledRejection', onRejection);
  await gateway.close();
  await sandbox.close();
});

const STATUS = 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { txRef status } }';
const STREAMING: Transport[] = ['SSE distinct', 'SSE single', 'multipart', 'WebSocket'];

describe.each(STREAMING)('an error inside a subscription over %s', (transport) => {
  it('a foreign txRef with an end-user token: a FORBIDDEN event, then the stream ends', async () => {
    const token = await gateway.token({ scope: null, sub: 'usr_a', txRefs: ['NT-SUCCESS001'] });
    const out = await runOver(
      transport,
      gateway.url,
      {
        query: STATUS,
        variables: { txRef: 'NT-FAILED001' },
      },
      { token },
    );
    expect(out.codes).toEqual(['FORBIDDEN']);
    if (transport === 'SSE single') expect(out.status).toBe(202);
    expect(out.raw).not.toMatch(/stack|\/work\/|\.ts:|"http"|exception/);
  });

  it('an upstream answering 500: an upstream error event, then the stream ends', async () => {
    const out = await runOver(
      transport,
      gateway.url,
      {
        query: STATUS,
        variables: { txRef: 'NT-ERROR500' },
      },
      { token: await gateway.token({ sub: `svc-${transport}` }) },
    );
    expect(out.codes).toHaveLength(1);
    expect(out.codes[0]).toMatch(/^UPSTREAM_/);
    expect(out.raw).not.toMatch(/stack|\/work\/|\.ts:|"http"|exception/);
  });

  it('one live subscription more than the caller may hold: a RATE_LIMITED event', async () => {
    const sub = `holder-${transport}`;
    const token = await gateway.token({ sub });
    const txRef = `NT-PENDING${Date.now()}${transport.length}`;
    // The first watch holds the caller's one slot (PENDING for 30 s).
    const holding = runOver(
      transport,
      gateway.url,
      { query: STATUS, variables: { txRef } },
      {
        token,
        timeoutMs: 1500,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const second = await runOver(
      transport,
      gateway.url,
      {
        query: STATUS,
        variables: { txRef: `${txRef}1` },
      },
      { token },
    );
    expect(second.codes).toEqual(['RATE_LIMITED']);
    expect((await holding).codes).toEqual([]);
  });
});

describe.each(STREAMING)('a stream over %s that its client leaves', (transport) => {
  it("gives the caller's live slot back at once", async () => {
    const token = await gateway.token({ sub: `leaver-${transport}` });
    const watch = (suffix: string) =>
      runOver(
        transport,
        gateway.url,
        { query: STATUS, variables: { txRef: `NT-PENDING${Date.now()}${suffix}` } },
        { token, maxResults: 1 },
      );
    // LIVE_MAX_PER_CALLER is 1: each watch gets PENDING only if the one before was freed.
    for (const suffix of ['1', '2', '3']) {
      const out = await watch(suffix);
      expect(out.codes).toEqual([]);
      expect(JSON.stringify(out.results)).toContain('PENDING');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});

describe('the graphql-sse client in single-connection mode', () => {
  it('receives the error and the gateway goes on serving', async () => {
    const token = await gateway.token({ scope: null, sub: 'usr_b', txRefs: ['NT-SUCCESS001'] });
    const client = createClient({
      url: `${gateway.url}/graphql`,
      singleConnection: true,
      retryAttempts: 0,
      headers: { authorization: `Bearer ${token}` },
    });
    try {
      const { results, error } = await collect(client, STATUS, { txRef: 'NT-FAILED001' });
      expect(error).toBeUndefined();
      expect(results).toEqual([
        {
          errors: [
            expect.objectContaining({
              extensions: { code: 'FORBIDDEN' },
            }),
          ],
        },
      ]);
      const again = await collect(client, '{ transaction(txRef: "NT-SUCCESS001") { status } }');
      expect(again.results).toEqual([{ data: { transaction: { status: 'SUCCESSFUL' } } }]);
    } finally {
      client.dispose();
    }
    const health = await fetch(`${gateway.url}/healthz`);
    expect(health.status).toBe(200);
    expect(rejections).toEqual([]);
  });
});
