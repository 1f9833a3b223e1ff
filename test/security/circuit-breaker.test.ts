/**
 * A record that fails on its own must not take the payment service down for every caller: the
 * circuit opens on failures spread over several records (the service is down), measured as a
 * failure rate over a window with a minimum of calls, and never on one record asked again and
 * again while others succeed.
 */
import { expect, it } from 'vitest';
import { TransactionDocument } from '../../src/client/generated/graphql.ts';
import { byRef, setup } from '../helpers/fixture-gateway.ts';
import { codesOf, dataOf, gql } from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';

it('one record answering 500, asked 50 times, leaves the circuit closed for the others', async () => {
  const { gateway, token } = await setup(
    (request, index) =>
      request.path.endsWith('/NT-BROKEN1') ? { status: 500, body: {} } : byRef(request, index),
    { env: { UPSTREAM_MAX_ATTEMPTS: '1', UPSTREAM_BREAKER_MIN_CALLS: '5' } },
  );
  for (let i = 0; i < 50; i++) {
    const broken = await gql(gateway, TransactionDocument, { txRef: 'NT-BROKEN1' }, token);
    expect(codesOf(broken)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(broken.errors?.[0]?.message).not.toMatch(/circuit/);
    if (i % 10 === 0) {
      const other = await gql(gateway, TransactionDocument, { txRef: `NT-GOOD${i}` }, token);
      expect(dataOf(other).transaction?.txRef).toBe(`NT-GOOD${i}`);
    }
  }
  expect(await metric(gateway, 'gateway_upstream_circuit_state', { upstream: 'payment' })).toBe(0);
  expect(
    await metric(gateway, 'gateway_upstream_rejected_total', {
      upstream: 'payment',
      reason: 'circuit_open',
    }),
  ).toBe(0);
});

it('failures spread over many records still open it', async () => {
  const { payment, gateway, token } = await setup(() => ({ status: 503, body: {} }), {
    env: { UPSTREAM_MAX_ATTEMPTS: '1', UPSTREAM_BREAKER_MIN_CALLS: '5' },
  });
  for (let i = 0; i < 5; i++) {
    await gql(gateway, TransactionDocument, { txRef: `NT-DOWN${i}` }, token);
  }
  expect(await metric(gateway, 'gateway_upstream_circuit_state', { upstream: 'payment' })).toBe(1);
  const calls = payment.requests.length;
  const refused = await gql(gateway, TransactionDocument, { txRef: 'NT-DOWN9' }, token);
  expect(refused.errors?.[0]?.message).toMatch(/circuit open/);
  expect(payment.requests.length).toBe(calls);
});

it('successes count too: a fifth of the records failing among good answers leaves it closed', async () => {
  const { gateway, token } = await setup(
    (request, index) =>
      /NT-MIXED\d*[05]$/.test(request.path) ? { status: 503, body: {} } : byRef(request, index),
    { env: { UPSTREAM_MAX_ATTEMPTS: '1', UPSTREAM_BREAKER_MIN_CALLS: '5' } },
  );
  let failed = 0;
  for (let i = 0; i < 40; i++) {
    const answer = await gql(gateway, TransactionDocument, { txRef: `NT-MIXED${i}` }, token);
    if (i % 5 === 0) {
      expect(codesOf(answer)).toEqual(['UPSTREAM_UNAVAILABLE']);
      expect(answer.errors?.[0]?.message).not.toMatch(/circuit/);
      failed += 1;
    } else expect(dataOf(answer).transaction?.txRef).toBe(`NT-MIXED${i}`);
  }
  expect(failed).toBe(8);
  expect(await metric(gateway, 'gateway_upstream_circuit_state', { upstream: 'payment' })).toBe(0);
});
