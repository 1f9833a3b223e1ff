/**
 * BENCH_FEATURES_OFF, the benchmark's switches (`npm run bench -- --features`): each turns one
 * production feature off, against real fixture upstreams on loopback, and production refuses
 * them all (test/unit/config.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { TransactionDocument } from '../../src/client/generated/graphql.ts';
import type { FixtureHandler } from '../helpers/fixture.ts';
import { byRef, setup } from '../helpers/fixture-gateway.ts';
import { codesOf, dataOf, gql } from '../helpers/gateway.ts';

describe('BENCH_FEATURES_OFF (benchmark only)', () => {
  it('keeps storing records when unset: the second read of a reference is a cache hit', async () => {
    const { payment, gateway, token } = await setup(byRef);
    for (let i = 0; i < 2; i++) {
      const answer = await gql(gateway, TransactionDocument, { txRef: 'NT-KEEP1' }, token);
      expect(dataOf(answer).transaction?.txRef).toBe('NT-KEEP1');
    }
    expect(payment.requests).toHaveLength(1);
  });

  it('cache-write: nothing is stored, so every read calls the upstream', async () => {
    const { payment, gateway, token } = await setup(byRef, {
      env: { BENCH_FEATURES_OFF: 'cache-write' },
    });
    for (let i = 0; i < 3; i++) {
      const answer = await gql(gateway, TransactionDocument, { txRef: 'NT-NOWRITE1' }, token);
      expect(dataOf(answer).transaction?.txRef).toBe('NT-NOWRITE1');
    }
    expect(payment.requests).toHaveLength(3);
  });

  it('single-flight: concurrent misses of one reference each call the upstream', async () => {
    const slow: FixtureHandler = (request, index) => ({ ...byRef(request, index), delayMs: 100 });
    const shared = await setup(slow);
    const alone = await setup(slow, { env: { BENCH_FEATURES_OFF: 'single-flight' } });
    for (const { gateway, token } of [shared, alone]) {
      const answers = await Promise.all(
        [0, 1, 2].map(() => gql(gateway, TransactionDocument, { txRef: 'NT-FLIGHT1' }, token)),
      );
      for (const answer of answers) expect(dataOf(answer).transaction?.txRef).toBe('NT-FLIGHT1');
    }
    expect(shared.payment.requests).toHaveLength(1);
    expect(alone.payment.requests).toHaveLength(3);
  });

  it('breaker: a failing upstream is called every time, no circuit opens', async () => {
    const { payment, gateway, token } = await setup(() => ({ status: 500, body: {} }), {
      env: {
        BENCH_FEATURES_OFF: 'breaker',
        UPSTREAM_BREAKER_MIN_CALLS: '3',
        UPSTREAM_MAX_ATTEMPTS: '1',
      },
    });
    for (let i = 0; i < 6; i++) {
      const answer = await gql(gateway, TransactionDocument, { txRef: `NT-NOBREAK${i}` }, token);
      expect(codesOf(answer)).toEqual(['UPSTREAM_UNAVAILABLE']);
      expect(answer.errors?.[0]?.message).not.toMatch(/circuit open/);
    }
    expect(payment.requests).toHaveLength(6);
  });

  it('metrics: the request path observes nothing, /metrics still answers', async () => {
    const { gateway, token } = await setup(byRef, { env: { BENCH_FEATURES_OFF: 'metrics' } });
    await gql(gateway, TransactionDocument, { txRef: 'NT-NOMETRICS1' }, token);
    const response = await fetch(`${gateway.url}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('# TYPE gateway_graphql_requests_total counter');
    expect(text).not.toMatch(/^gateway_graphql_requests_total\{/m);
    expect(text).not.toMatch(/^gateway_upstream_requests_total\{/m);
  });
});
