/**
 * Exact money through the whole gateway: a fixture payment upstream answers raw JSON text (so
 * the amounts are exactly the digits written here), and the answers are checked field by field,
 * first from the upstream, then from the cache.
 */
import { describe, expect, it } from 'vitest';
import type { FixtureHandler } from '../helpers/fixture.ts';
import { setup } from '../helpers/fixture-gateway.ts';
import { codesOf, dataOf, gql } from '../helpers/gateway.ts';

/** The raw answer for each reference: amounts as the payment service might write them. */
const BODIES: Record<string, string> = {
  'NT-KWD1':
    '{"event":"PAYMENT_SUCCESSFUL","data":{"txStatus":"SUCCESSFUL","currency":"KWD",' +
    '"amount": 10.125, "appFee": 0.1, "merchantFee": "0.0005"}}',
  'NT-NGN1':
    '{"event":"PAYMENT_SUCCESSFUL","data":{"txStatus":"SUCCESSFUL","currency":"NGN",' +
    '"amount": 1500.505, "appFee": 0.30000000000000004, "merchantFee": "1500.5"}}',
  'NT-BIG1':
    '{"event":"PAYMENT_SUCCESSFUL","data":{"txStatus":"SUCCESSFUL","currency":"ngn",' +
    '"amount": 12345678901234567.89, "appFee": -2.675, "merchantFee": null}}',
  'NT-JPY1':
    '{"event":"PAYMENT_SUCCESSFUL","data":{"txStatus":"SUCCESSFUL","currency":"JPY",' +
    '"amount": "1500", "appFee": 1500.5, "merchantFee": 0}}',
  'NT-NOCUR1': '{"event":"PAYMENT_SUCCESSFUL","data":{"txStatus":"SUCCESSFUL","amount": 10.125}}',
};

const rawBodies: FixtureHandler = (request) => ({
  headers: { 'content-type': 'application/json' },
  body: BODIES[request.path.split('/').pop() ?? ''] ?? '{"error":true,"message":"not found"}',
});

const MONEY = 'amount currency minorUnits amountMinor';
const QUERY = `query Money($txRef: ID!) {
  transaction(txRef: $txRef) {
    amount appFee merchantFee
    amountMoney { ${MONEY} }
    appFeeMoney { ${MONEY} }
    merchantFeeMoney { ${MONEY} }
  }
}`;

interface MoneyAnswer {
  transaction: Record<string, unknown> | null;
}

describe('Money through a fixture upstream', () => {
  it('answers the exact decimals, minor units and rounded floats, the same from the cache', async () => {
    const { payment, gateway, token } = await setup(rawBodies);
    const expected: Record<string, Record<string, unknown>> = {
      'NT-KWD1': {
        amount: 10.125,
        appFee: 0.1,
        merchantFee: 0.001,
        amountMoney: { amount: '10.125', currency: 'KWD', minorUnits: 3, amountMinor: '10125' },
        appFeeMoney: { amount: '0.100', currency: 'KWD', minorUnits: 3, amountMinor: '100' },
        merchantFeeMoney: { amount: '0.0005', currency: 'KWD', minorUnits: 3, amountMinor: '1' },
      },
      'NT-NGN1': {
        amount: 1500.51,
        appFee: 0.3,
        merchantFee: 1500.5,
        amountMoney: { amount: '1500.505', currency: 'NGN', minorUnits: 2, amountMinor: '150051' },
        appFeeMoney: {
          amount: '0.30000000000000004',
          currency: 'NGN',
          minorUnits: 2,
          amountMinor: '30',
        },
        merchantFeeMoney: {
          amount: '1500.50',
          currency: 'NGN',
          minorUnits: 2,
          amountMinor: '150050',
        },
      },
      'NT-BIG1': {
        amount: 12345678901234568,
        appFee: -2.68,
        merchantFee: null,
        amountMoney: {
          amount: '12345678901234567.89',
          currency: 'NGN',
          minorUnits: 2,
          amountMinor: '1234567890123456789',
        },
        appFeeMoney: { amount: '-2.675', currency: 'NGN', minorUnits: 2, amountMinor: '-268' },
        merchantFeeMoney: null,
      },
      'NT-JPY1': {
        amount: 1500,
        appFee: 1501,
        merchantFee: 0,
        amountMoney: { amount: '1500', currency: 'JPY', minorUnits: 0, amountMinor: '1500' },
        appFeeMoney: { amount: '1500.5', currency: 'JPY', minorUnits: 0, amountMinor: '1501' },
        merchantFeeMoney: { amount: '0', currency: 'JPY', minorUnits: 0, amountMinor: '0' },
      },
    };
    for (const [txRef, transaction] of Object.entries(expected)) {
      const first = await gql<MoneyAnswer, { txRef: string }>(gateway, QUERY, { txRef }, token);
      expect(dataOf(first), txRef).toEqual({ transaction });
      const calls = payment.requests.length;
      // A cache hit: no upstream call, the very same answer.
      const second = await gql<MoneyAnswer, { txRef: string }>(gateway, QUERY, { txRef }, token);
      expect(payment.requests.length, txRef).toBe(calls);
      expect(second.errors).toBeUndefined();
      expect(second.data, txRef).toEqual(first.data);
    }
    expect(payment.requests).toHaveLength(Object.keys(expected).length);
  });

  it('an amount without a currency: the Float, and Money null with an error on that field only', async () => {
    const { gateway, token } = await setup(rawBodies);
    const response = await gql<MoneyAnswer, { txRef: string }>(
      gateway,
      `{ transaction(txRef: "NT-NOCUR1") { amount amountMoney { amount } appFeeMoney { amount } } }`,
      undefined,
      token,
    );
    expect(response.data).toEqual({
      transaction: { amount: 10.13, amountMoney: null, appFeeMoney: null },
    });
    expect(response.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([
      [['transaction', 'amountMoney'], 'UPSTREAM_BAD_RESPONSE'],
    ]);
    expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
  });

  it('an amount that is not a number makes the record UPSTREAM_BAD_RESPONSE', async () => {
    const { gateway, token } = await setup(() => ({
      headers: { 'content-type': 'application/json' },
      body: '{"data":{"txStatus":"SUCCESSFUL","currency":"NGN","amount":"12,50"}}',
    }));
    const response = await gql<MoneyAnswer, { txRef: string }>(
      gateway,
      QUERY,
      { txRef: 'NT-BAD1' },
      token,
    );
    expect(response.data).toEqual({ transaction: null });
    expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
  });
});
