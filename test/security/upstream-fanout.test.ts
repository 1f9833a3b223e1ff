/**
 * One caller must not make the gateway hammer the upstream or starve other callers: at most
 * MAX_RECORDS_PER_REQUEST distinct records per request whatever the aliases, a bounded share of
 * upstream concurrency per caller, and a brief memory of unknown references.
 */
import { expect, it } from 'vitest';
import { transactionBody } from '../helpers/fixture.ts';
import { byRef, setup } from '../helpers/fixture-gateway.ts';
import { codesOf, gql } from '../helpers/gateway.ts';

const fanOut = (prefix: string) =>
  `{ ${Array.from(
    { length: 20 },
    (_, a) =>
      `t${a}: transactions(txRefs: [${Array.from({ length: 100 }, (_, r) => `"NT-${prefix}${a}X${r}"`).join(', ')}]) { txRef }`,
  ).join(' ')} }`;

it('20 aliases × 100 references make at most MAX_RECORDS_PER_REQUEST upstream calls', async () => {
  // Every call is counted: none may time out (and be retried) on a busy machine.
  const { payment, gateway, token } = await setup(byRef, { env: { UPSTREAM_TIMEOUT_MS: '10000' } });
  const response = await gql(gateway, fanOut('FAN'), {}, token);
  expect(payment.requests.length).toBe(100);
  const codes = codesOf(response);
  expect(codes).toHaveLength(1900);
  expect(new Set(codes)).toEqual(new Set(['BAD_USER_INPUT']));
  expect(JSON.stringify(response.errors?.[0])).toMatch(/more than 100 distinct records/);
});

it("three such requests at once leave another caller's query served, and keep each caller within its share", async () => {
  let inFlight = 0;
  let most = 0;
  const { payment, gateway } = await setup(
    (request) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight -= 1;
      }, 20);
      return { body: transactionBody({ paymentRef: request.path.split('/').pop() }), delayMs: 20 };
    },
    {
      env: {
        UPSTREAM_MAX_CONCURRENT_PER_CALLER: '4',
        SERVICE_UPSTREAM_MAX_CONCURRENT_PER_CALLER: '8',
        UPSTREAM_TIMEOUT_MS: '5000',
      },
    },
  );
  const greedy = await gateway.token({ sub: 'greedy' });
  const other = await gateway.token({ sub: 'other' });
  const attacks = [0, 1, 2].map((i) => gql(gateway, fanOut(`G${i}`), {}, greedy));
  const victim = await gql(gateway, '{ transaction(txRef: "NT-VICTIM1") { txRef } }', {}, other);
  expect(victim.errors).toBeUndefined();
  expect(victim.data).toEqual({ transaction: { txRef: 'NT-VICTIM1' } });
  await Promise.all(attacks);
  // The greedy caller's 300 calls ran at most 8 at a time; the victim's took its own slot.
  expect(most).toBeLessThanOrEqual(9);
  expect(payment.requests.length).toBe(301);
});

it('remembers an unknown reference briefly; verifyTransaction still asks', async () => {
  const { payment, gateway, token } = await setup(() => ({
    status: 404,
    body: { error: true, message: 'Transaction not found' },
  }));
  for (let i = 0; i < 50; i++) {
    const response = await gql(gateway, '{ transaction(txRef: "NT-NOPE1") { txRef } }', {}, token);
    expect(response.data).toEqual({ transaction: null });
  }
  expect(payment.requests.length).toBe(1);
  await gql(gateway, 'mutation { verifyTransaction(txRef: "NT-NOPE1") { txRef } }', {}, token);
  expect(payment.requests.length).toBe(2);
});
