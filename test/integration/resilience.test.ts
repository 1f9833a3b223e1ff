/**
 * Resilience against real fault servers on loopback: the circuit breaker, recovery without a
 * restart, the concurrency cap, retry spacing, stale-on-error and readiness.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  KycUserDocument,
  TransactionDocument,
  TransactionsDocument,
  VerifyTransactionDocument,
} from '../../src/client/generated/graphql.ts';
import type { SettingsEnv } from '../../src/settings.ts';
import { advanceWallClock } from '../helpers/clock.ts';
import { transactionBody } from '../helpers/fixture.ts';
import { byRef, setup } from '../helpers/fixture-gateway.ts';
import { codesOf, dataOf, gql } from '../helpers/gateway.ts';

describe('circuit breaker', () => {
  it('opens on a failure rate over several records, answers at once while open, closes after a good probe', async () => {
    let down = true;
    const { payment, gateway, token } = await setup(
      (request, index) => (down ? { status: 500, body: { error: true } } : byRef(request, index)),
      {
        env: {
          UPSTREAM_BREAKER_MIN_CALLS: '3',
          UPSTREAM_BREAKER_HALF_OPEN_MS: '400',
          UPSTREAM_MAX_ATTEMPTS: '1',
        },
      },
    );
    for (let i = 0; i < 3; i++) {
      const response = await gql(gateway, TransactionDocument, { txRef: `NT-BR${i}` }, token);
      expect(codesOf(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
    }
    expect(payment.requests).toHaveLength(3);
    const metricsOpen = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metricsOpen).toMatch(/gateway_upstream_circuit_state\{upstream="payment"\} 1/);

    const started = performance.now();
    const refused = await gql(gateway, TransactionDocument, { txRef: 'NT-BR9' }, token);
    expect(performance.now() - started).toBeLessThan(200);
    expect(codesOf(refused)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(refused.errors?.[0]?.message).toMatch(/circuit open/);
    expect(payment.requests).toHaveLength(3);

    down = false;
    advanceWallClock(450);
    const probe = await gql(gateway, TransactionDocument, { txRef: 'NT-BR10' }, token);
    expect(dataOf(probe).transaction?.txRef).toBe('NT-BR10');
    const after = await gql(gateway, TransactionDocument, { txRef: 'NT-BR11' }, token);
    expect(dataOf(after).transaction?.txRef).toBe('NT-BR11');
    expect(payment.requests).toHaveLength(5);
    const metricsClosed = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metricsClosed).toMatch(/gateway_upstream_circuit_state\{upstream="payment"\} 0/);
    expect(metricsClosed).toMatch(
      /gateway_upstream_rejected_total\{upstream="payment",reason="circuit_open"\} 1/,
    );
  });

  it('readiness fails while both upstream circuits are open', async () => {
    const { gateway, token } = await setup(() => ({ status: 503 }), {
      kyc: () => ({ status: 503 }),
      env: { UPSTREAM_BREAKER_MIN_CALLS: '1', UPSTREAM_MAX_ATTEMPTS: '1' },
    });
    expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
    await gql(gateway, TransactionDocument, { txRef: 'NT-RD1' }, token);
    expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
    await gql(gateway, KycUserDocument, { userRef: 'u1' }, token);
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain('circuits are open');
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
  });
});

describe('recovery', () => {
  it('serves again, without a restart, once a stopped upstream comes back on its address', async () => {
    const { payment, gateway, token } = await setup(byRef);
    const port = Number(new URL(payment.url).port);
    await payment.close();
    const down = await gql(gateway, TransactionDocument, { txRef: 'NT-DB1' }, token);
    expect(codesOf(down)).toEqual(['UPSTREAM_UNAVAILABLE']);

    const revived = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(transactionBody({ paymentRef: req.url?.split('/').pop() })));
    });
    revived.listen(port, '127.0.0.1');
    await once(revived, 'listening');
    try {
      const back = await gql(gateway, TransactionDocument, { txRef: 'NT-DB1' }, token);
      expect(dataOf(back).transaction?.txRef).toBe('NT-DB1');
    } finally {
      revived.closeAllConnections();
      revived.close();
    }
  });
});

describe('concurrency cap', () => {
  it('refuses calls beyond the cap and its queue with UPSTREAM_UNAVAILABLE', async () => {
    const { payment, gateway, token } = await setup(
      (request) => ({ ...byRef(request, 0), delayMs: 300 }),
      { env: { UPSTREAM_MAX_CONCURRENT: '2', UPSTREAM_MAX_QUEUED: '1' } },
    );
    const txRefs = ['NT-CC1', 'NT-CC2', 'NT-CC3', 'NT-CC4', 'NT-CC5'];
    const response = await gql(gateway, TransactionsDocument, { txRefs }, token);
    const served = response.data?.transactions.filter((tx) => tx !== null).length;
    expect(served).toBe(3);
    expect(codesOf(response)).toEqual(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE']);
    expect(response.errors?.[0]?.message).toMatch(/too many calls in flight/);
    expect(payment.requests).toHaveLength(3);
  });
});

/**
 * Four reads of one request behind a queue that lets one call through at a time, every call
 * hanging for the whole budget: the read's budget counts the wait, so the reads queued behind the
 * first run out with it and are never made (before, each got a budget of its own once it had its
 * turn: four reads took four budgets, one after the other). The first call is made, and at most
 * the one whose turn came as the budgets ran out together.
 */
async function hangingReadsBehindOne(env: SettingsEnv) {
  const never = new Promise<never>(() => {});
  const { payment, gateway, token } = await setup(() => ({ until: never }), {
    env: { UPSTREAM_TIMEOUT_MS: '1000', UPSTREAM_MAX_ATTEMPTS: '1', ...env },
  });
  const txRefs = ['NT-HB1', 'NT-HB2', 'NT-HB3', 'NT-HB4'];
  const response = await gql(gateway, TransactionsDocument, { txRefs }, token);
  expect(codesOf(response)).toEqual(txRefs.map(() => 'UPSTREAM_TIMEOUT'));
  expect(payment.requests.length).toBeLessThanOrEqual(2);
  // The calls refused in either queue are counted alike.
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  expect(metrics).toMatch(
    /gateway_upstream_rejected_total\{upstream="payment",reason="concurrency"\} [1-3]\b/,
  );
}

describe('the time budget covers the waits', () => {
  it("gives a call that waited for a slot of the upstream's cap only what is left of its budget", async () => {
    await hangingReadsBehindOne({
      UPSTREAM_MAX_CONCURRENT: '1',
      UPSTREAM_MAX_QUEUED: '10',
    });
  });

  it("gives a call that waited in its caller's queue only what is left of its budget", async () => {
    await hangingReadsBehindOne({
      UPSTREAM_MAX_CONCURRENT_PER_CALLER: '1',
      SERVICE_UPSTREAM_MAX_CONCURRENT_PER_CALLER: '1',
    });
  });
});

describe('retries', () => {
  it('spaces retries with growing backoff and stops at the attempt limit', async () => {
    const arrivals: number[] = [];
    const { payment, gateway, token } = await setup(
      () => {
        arrivals.push(performance.now());
        return { status: 503 };
      },
      {
        env: {
          UPSTREAM_MAX_ATTEMPTS: '4',
          UPSTREAM_RETRY_BASE_DELAY_MS: '50',
          UPSTREAM_TIMEOUT_MS: '5000',
        },
      },
    );
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-SP1' }, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(payment.requests).toHaveLength(4);
    const gaps = arrivals.slice(1).map((t, i) => t - (arrivals[i] ?? t));
    // Decorrelated jitter (cockatiel): one delay may come out near zero by design, but the three
    // together wait at least ≈ 2.8 × the base delay (the formula's value at the third attempt), and
    // they are never all equal.
    expect(gaps.reduce((sum, gap) => sum + gap, 0)).toBeGreaterThanOrEqual(120);
    expect(Math.max(...gaps)).toBeGreaterThan(Math.min(...gaps));
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/gateway_upstream_retries_total\{upstream="payment"\} 3/);
  });

  it('never retries a mutation-free GET beyond the budget: a slow 503 chain ends in time', async () => {
    const { gateway, token } = await setup(() => ({ status: 503, delayMs: 200 }), {
      env: { UPSTREAM_MAX_ATTEMPTS: '10', UPSTREAM_TIMEOUT_MS: '700' },
    });
    const started = performance.now();
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-BU1' }, token);
    expect(performance.now() - started).toBeLessThan(1200);
    expect(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT']).toContain(codesOf(response)[0]);
  });
});

describe('stale on error', () => {
  it('serves an expired final transaction when the payment service is down, and says so', async () => {
    let down = false;
    const { gateway, token } = await setup(
      (request, index) => (down ? { status: 503 } : byRef(request, index)),
      { env: { CACHE_TTL_FINAL_SECONDS: '1', UPSTREAM_MAX_ATTEMPTS: '1' } },
    );
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-ST1' }, token));
    advanceWallClock(1100);
    down = true;
    const stale = await gql(gateway, TransactionDocument, { txRef: 'NT-ST1' }, token);
    expect(stale.errors).toBeUndefined();
    expect(stale.data?.transaction?.txRef).toBe('NT-ST1');
    const staleExtension = stale.extensions?.stale as
      | { records: Array<{ txRef: string; ageSeconds: number }> }
      | undefined;
    const records = staleExtension?.records ?? [];
    expect(records).toHaveLength(1);
    expect(records[0]?.txRef).toBe('NT-ST1');
    expect(records[0]?.ageSeconds).toBeGreaterThanOrEqual(1);

    const verify = await gql(gateway, VerifyTransactionDocument, { txRef: 'NT-ST1' }, token);
    expect(codesOf(verify)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(verify.extensions?.stale).toBeUndefined();
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/gateway_cache_events_total\{kind="transaction",outcome="stale"\} 1/);
  });

  it('never serves a pending transaction or KYC details stale', async () => {
    let down = false;
    const { gateway, token } = await setup(
      () =>
        down
          ? { status: 503 }
          : { body: transactionBody({ txStatus: 'PENDING', txIsSucces: false }) },
      {
        env: {
          CACHE_TTL_PENDING_SECONDS: '1',
          CACHE_TTL_KYC_SECONDS: '1',
          UPSTREAM_MAX_ATTEMPTS: '1',
        },
        kyc: (_, index) =>
          index === 0 ? { body: { error: false, data: { levels: [] } } } : { status: 503 },
      },
    );
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-PS1' }, token));
    dataOf(await gql(gateway, KycUserDocument, { userRef: 'u-stale' }, token));
    advanceWallClock(1100);
    down = true;
    const tx = await gql(gateway, TransactionDocument, { txRef: 'NT-PS1' }, token);
    expect(codesOf(tx)).toEqual(['UPSTREAM_UNAVAILABLE']);
    const kyc = await gql(gateway, KycUserDocument, { userRef: 'u-stale' }, token);
    expect(codesOf(kyc)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });
});
