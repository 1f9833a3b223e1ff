/**
 * `confirmPayment` through real HTTP, in front of a fixture payment upstream that answers raw
 * JSON text (the amounts are exactly the digits written here) and records every call: each
 * problem, several at once, the claim of one payment for one order (in memory: no CACHE_URL),
 * every BAD_USER_INPUT case with zero upstream calls, the scope, the record stored as
 * `verifyTransaction` stores it, an upstream failure that confirms nothing, and the counter.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfirmPaymentDocument,
  type ConfirmPaymentMutation,
  type OrderInput,
} from '../../src/client/generated/graphql.ts';
import { type Fixture, kycBody, startFixture } from '../helpers/fixture.ts';
import {
  codesOf,
  dataOf,
  type GraphQLResponse,
  gql,
  startGateway,
  startSandboxGateway,
  type TestGateway,
} from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';

/** A payment answer as raw JSON text, `data` fields written as given (numbers unquoted). */
function raw(fields: Record<string, string>): string {
  const data = Object.entries(fields)
    .map(([key, value]) => `"${key}":${value}`)
    .join(',');
  return `{"event":"PAYMENT_SUCCESSFUL","data":{${data}}}`;
}

const PAID = {
  txStatus: '"SUCCESSFUL"',
  txIsSucces: 'true',
  currency: '"NGN"',
  amount: '1500.50',
  merchantRef: '"ORDER-1"',
};

/** The answer of each reference; a reference listed nowhere is unknown (404). */
const BODIES: Record<string, string> = {
  'NT-PAID1': raw(PAID),
  'NT-PAID2': raw(PAID),
  'NT-PAID3': raw(PAID),
  'NT-PAID4': raw(PAID),
  'NT-PAID5': raw(PAID),
  'NT-FAILED1': raw({ ...PAID, txStatus: '"FAILED"', txIsSucces: 'false' }),
  'NT-PENDING1': raw({ ...PAID, txStatus: '"PENDING"', txIsSucces: 'false' }),
  'NT-ODD1': raw({ ...PAID, txStatus: '"REVERSED"' }),
  'NT-FLAGOFF1': raw({ ...PAID, txIsSucces: 'false' }),
  'NT-TEN1': raw({ ...PAID, amount: '10' }),
  'NT-USD1': raw({ ...PAID, currency: '"usd"', amount: '1500.50' }),
  'NT-NOREF1': raw({ ...PAID, merchantRef: 'null' }),
  'NT-NOAMOUNT1': raw({ ...PAID, amount: 'null' }),
  'NT-NOCUR1': raw({ ...PAID, currency: 'null' }),
  'NT-ALLWRONG1': raw({
    txStatus: '"FAILED"',
    txIsSucces: 'false',
    currency: '"NGN"',
    amount: '10',
    merchantRef: '"ORDER-9"',
  }),
  'NT-BIG1': raw({ ...PAID, amount: '12345678901234567.89' }),
  'NT-EXTRA1': raw({ ...PAID, amount: '1500.505' }),
  'NT-STRING1': raw({ ...PAID, amount: '"1500.5"' }),
  'NT-JPY1': raw({ ...PAID, currency: '"JPY"', amount: '1500' }),
  'NT-KWD1': raw({ ...PAID, currency: '"KWD"', amount: '10.125' }),
  'NT-FLAKY1': raw(PAID),
};

let payment: Fixture;
let kyc: Fixture;
let gateway: TestGateway;
let token: string;
/** References whose upstream answers 500 until removed. */
const failing = new Set<string>();
const logLines: string[] = [];

beforeAll(async () => {
  payment = await startFixture((request) => {
    const txRef = request.path.split('/').pop() ?? '';
    if (failing.has(txRef)) return { status: 500, body: { error: true, message: 'boom' } };
    // Read without regard to case, as some payment services do.
    const body = BODIES[txRef.toUpperCase()];
    if (body === undefined) return { status: 404, body: { error: true, message: 'not found' } };
    return { headers: { 'content-type': 'application/json' }, body };
  });
  kyc = await startFixture(() => ({ body: kycBody() }));
  gateway = await startGateway(
    { paymentUrl: payment.url, kycUrl: kyc.url },
    { UPSTREAM_TIMEOUT_MS: '1500', UPSTREAM_RETRY_BASE_DELAY_MS: '20' },
    { logLines },
  );
  token = await gateway.token({ scope: 'transactions:read' });
});

afterAll(async () => {
  await gateway?.close();
  await payment?.close();
  await kyc?.close();
});

/** Calls the payment upstream received for one reference. */
const callsFor = (txRef: string) =>
  payment.requests.filter((request) => request.path.endsWith(`/${txRef}`)).length;

const ORDER: OrderInput = { id: 'order-1', amount: '1500.50', currency: 'NGN' };

function confirm(txRef: string, order: Partial<OrderInput> = {}, as: string | null = token) {
  return gql(gateway, ConfirmPaymentDocument, { txRef, order: { ...ORDER, ...order } }, as);
}

async function confirmed(
  txRef: string,
  order: Partial<OrderInput> = {},
): Promise<ConfirmPaymentMutation['confirmPayment']> {
  return dataOf(await confirm(txRef, order)).confirmPayment;
}

describe('confirmPayment compares the payment with the order', () => {
  it('confirms a SUCCESSFUL payment of exactly the amount, currency (any case) and merchantRef', async () => {
    const before = callsFor('NT-PAID1');
    const answer = await confirmed('NT-PAID1', { currency: 'ngn', merchantRef: 'ORDER-1' });
    expect(answer).toEqual({
      confirmed: true,
      problems: [],
      transaction: {
        txRef: 'NT-PAID1',
        status: 'SUCCESSFUL',
        currency: 'NGN',
        merchantRef: 'ORDER-1',
        amountMoney: { amount: '1500.50', currency: 'NGN', minorUnits: 2, amountMinor: '150050' },
      },
    });
    expect(callsFor('NT-PAID1')).toBe(before + 1);
  });

  it('accepts the order amount with fewer digits than the currency has ("1500.5")', async () => {
    expect(await confirmed('NT-PAID2', { amount: '1500.5' })).toMatchObject({ confirmed: true });
  });

  it('fetches fresh every time, and stores the record as verifyTransaction does', async () => {
    const txRef = 'NT-PAID3';
    await confirmed(txRef);
    await confirmed(txRef);
    expect(callsFor(txRef)).toBe(2);
    // The stored record answers the query with no further upstream call.
    const read = await gql(
      gateway,
      `{ transaction(txRef: "${txRef}") { txRef status } }`,
      {},
      token,
    );
    expect(dataOf(read)).toEqual({ transaction: { txRef, status: 'SUCCESSFUL' } });
    expect(callsFor(txRef)).toBe(2);
  });

  it.each([
    ['NT-UNKNOWN1', {}, ['NOT_FOUND']],
    ['NT-FAILED1', {}, ['NOT_SUCCESSFUL']],
    ['NT-PENDING1', {}, ['NOT_SUCCESSFUL']],
    ['NT-ODD1', {}, ['NOT_SUCCESSFUL']],
    ['NT-FLAGOFF1', {}, ['NOT_SUCCESSFUL']],
    ['NT-TEN1', { amount: '10000' }, ['AMOUNT_TOO_LOW']],
    ['NT-TEN1', { amount: '9.99' }, ['AMOUNT_TOO_HIGH']],
    ['NT-USD1', {}, ['CURRENCY_MISMATCH']],
    ['NT-NOAMOUNT1', {}, ['AMOUNT_TOO_LOW']],
    ['NT-TEN1', { amount: '10', merchantRef: 'ORDER-2' }, ['MERCHANT_REF_MISMATCH']],
    ['NT-NOREF1', { merchantRef: 'ORDER-1' }, ['MERCHANT_REF_MISMATCH']],
    [
      'NT-ALLWRONG1',
      { amount: '10000', merchantRef: 'ORDER-1' },
      ['NOT_SUCCESSFUL', 'AMOUNT_TOO_LOW', 'MERCHANT_REF_MISMATCH'],
    ],
    ['NT-USD1', { amount: '1', merchantRef: 'x' }, ['CURRENCY_MISMATCH', 'MERCHANT_REF_MISMATCH']],
    // Exact beyond 2^53: a double reads both as 12345678901234568.
    ['NT-BIG1', { amount: '12345678901234567.88' }, ['AMOUNT_TOO_HIGH']],
    ['NT-BIG1', { amount: '12345678901234567.90' }, ['AMOUNT_TOO_LOW']],
    // Digits beyond the minor unit count: 1500.505 is neither 1500.51 nor 1500.50.
    ['NT-EXTRA1', { amount: '1500.51' }, ['AMOUNT_TOO_LOW']],
    ['NT-EXTRA1', { amount: '1500.50' }, ['AMOUNT_TOO_HIGH']],
    ['NT-JPY1', { currency: 'JPY', amount: '1501' }, ['AMOUNT_TOO_LOW']],
    ['NT-KWD1', { currency: 'KWD', amount: '10.124' }, ['AMOUNT_TOO_HIGH']],
  ] as const)('%s for %o: %o, not confirmed, nothing claimed', async (txRef, order, problems) => {
    const answer = await confirmed(txRef, { id: `other-${txRef}`, ...order });
    expect(answer.problems).toEqual(problems);
    expect(answer.confirmed).toBe(false);
    if (txRef === 'NT-UNKNOWN1') expect(answer.transaction).toBeNull();
    else expect(answer.transaction?.txRef).toBe(txRef);
  });

  it('CURRENCY_MISMATCH when the payment service sent no currency (the record then fails as usual)', async () => {
    const response = await confirm('NT-NOCUR1');
    expect(response.data?.confirmPayment).toEqual({
      confirmed: false,
      problems: ['CURRENCY_MISMATCH'],
      transaction: null,
    });
    expect(new Set(codesOf(response))).toEqual(new Set(['UPSTREAM_BAD_RESPONSE']));
  });

  it('confirms exact amounts a double cannot hold, in 0, 2 and 3 minor digits', async () => {
    expect(await confirmed('NT-BIG1', { amount: '12345678901234567.89' })).toMatchObject({
      confirmed: true,
    });
    expect(await confirmed('NT-STRING1', { amount: '1500.50' })).toMatchObject({ confirmed: true });
    expect(await confirmed('NT-JPY1', { currency: 'jpy', amount: '1500' })).toMatchObject({
      confirmed: true,
    });
    expect(await confirmed('NT-KWD1', { currency: 'KWD', amount: '10.125' })).toMatchObject({
      confirmed: true,
      transaction: { amountMoney: { amount: '10.125', minorUnits: 3, amountMinor: '10125' } },
    });
  });
});

describe('one payment, one order', () => {
  it('the same order again gets the same answer; any other order ALREADY_CONFIRMED_FOR_ANOTHER_ORDER', async () => {
    const txRef = 'NT-PAID4';
    const first = await confirmed(txRef, { id: 'order-A' });
    expect(first.confirmed).toBe(true);
    expect(await confirmed(txRef, { id: 'order-A' })).toEqual(first);
    const other = await confirmed(txRef, { id: 'order-B' });
    expect(other).toMatchObject({
      confirmed: false,
      problems: ['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER'],
      transaction: { txRef },
    });
    // Another order whose own check fails too is told both.
    expect((await confirmed(txRef, { id: 'order-C', amount: '1' })).problems).toEqual([
      'AMOUNT_TOO_HIGH',
      'ALREADY_CONFIRMED_FOR_ANOTHER_ORDER',
    ]);
    // The holder still is order-A.
    expect((await confirmed(txRef, { id: 'order-A' })).confirmed).toBe(true);
    // Order ids are compared exactly: another case is another order.
    expect((await confirmed(txRef, { id: 'ORDER-A' })).confirmed).toBe(false);
    // The reference in another case is the same claim.
    const otherCase = await confirmed('NT-paid4', { id: 'order-B' });
    expect(otherCase.problems).toEqual(['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER']);
    expect((await confirmed('NT-Paid4', { id: 'order-A' })).confirmed).toBe(true);
  });

  it('a failed check claims nothing: the order that matches still confirms', async () => {
    const txRef = 'NT-PAID5';
    const wrong = await confirmed(txRef, { id: 'order-wrong', amount: '1500.49' });
    expect(wrong).toMatchObject({ confirmed: false, problems: ['AMOUNT_TOO_HIGH'] });
    expect((await confirmed(txRef, { id: 'order-right' })).confirmed).toBe(true);
    expect((await confirmed(txRef, { id: 'order-wrong' })).problems).toEqual([
      'ALREADY_CONFIRMED_FOR_ANOTHER_ORDER',
    ]);
  });

  it('an upstream failure is the usual error and claims nothing', async () => {
    const txRef = 'NT-FLAKY1';
    failing.add(txRef);
    const failed = await confirm(txRef, { id: 'order-during-outage' });
    expect(codesOf(failed)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(failed.data).toBeNull();
    failing.delete(txRef);
    expect((await confirmed(txRef, { id: 'order-after' })).confirmed).toBe(true);
  });

  it('said at start that claims live in memory without CACHE_URL', () => {
    expect(logLines.join('\n')).toMatch(
      /claims are kept in this process's memory \(no CACHE_URL\)/,
    );
  });
});

describe('refused with no upstream call', () => {
  async function refusedWithoutCall(
    send: () => Promise<GraphQLResponse<unknown>>,
    code: string,
  ): Promise<void> {
    const before = payment.requests.length;
    const response = await send();
    expect(codesOf(response)).toEqual([code]);
    expect(response.data ?? null).toBeNull();
    expect(payment.requests.length).toBe(before);
  }

  it.each([
    ['a malformed txRef', 'NT-', {}],
    ['a txRef with a slash', 'NT-A/../B', {}],
    ['a txRef without the prefix', 'PAID1', {}],
    ['amount 0', 'NT-PAID1', { amount: '0' }],
    ['amount 0.00', 'NT-PAID1', { amount: '0.00' }],
    ['a negative amount', 'NT-PAID1', { amount: '-5' }],
    ['an exponent', 'NT-PAID1', { amount: '1e3' }],
    ['not a number', 'NT-PAID1', { amount: 'ten' }],
    ['a thousands separator', 'NT-PAID1', { amount: '1,500.50' }],
    ['a space', 'NT-PAID1', { amount: ' 1500.50' }],
    ['a bare point', 'NT-PAID1', { amount: '1500.' }],
    ['three digits for NGN', 'NT-PAID1', { amount: '1500.505' }],
    ['trailing zero beyond NGN', 'NT-PAID1', { amount: '1500.500' }],
    ['a fraction for JPY', 'NT-JPY1', { currency: 'JPY', amount: '1500.0' }],
    ['four digits for KWD', 'NT-KWD1', { currency: 'KWD', amount: '10.1250' }],
    ['an amount of 41 characters', 'NT-PAID1', { amount: '1'.repeat(41) }],
    ['two letters', 'NT-PAID1', { currency: 'NG' }],
    ['four letters', 'NT-PAID1', { currency: 'NGNN' }],
    ['a code not in ISO 4217', 'NT-PAID1', { currency: 'XYZ' }],
    ['digits in the code', 'NT-PAID1', { currency: 'N6N' }],
    ['a letter that folds to ASCII', 'NT-PAID1', { currency: 'ınr' }],
    ['an order id of 129 characters', 'NT-PAID1', { id: 'o'.repeat(129) }],
    ['an empty order id', 'NT-PAID1', { id: '' }],
    ['a control character in the order id', 'NT-PAID1', { id: 'order\n1' }],
    ['an empty merchantRef', 'NT-PAID1', { merchantRef: '' }],
    ['a merchantRef of 257 characters', 'NT-PAID1', { merchantRef: 'm'.repeat(257) }],
  ] as const)('BAD_USER_INPUT for %s', async (_, txRef, order) => {
    await refusedWithoutCall(() => confirm(txRef, order), 'BAD_USER_INPUT');
  });

  it('accepts an order id of exactly 128 characters', async () => {
    const answer = await confirmed('NT-TEN1', { id: 'o'.repeat(128) });
    expect(answer.problems).toEqual(['AMOUNT_TOO_LOW']);
  });

  it('BAD_USER_INPUT for a bad amount written in the document itself', async () => {
    const literal = (amount: string) =>
      gql(
        gateway,
        `mutation { confirmPayment(txRef: "NT-PAID1", order: { id: "o-1", amount: "${amount}", currency: "NGN" }) { confirmed } }`,
        {},
        token,
      );
    for (const amount of ['1e3', '-5', '0']) {
      await refusedWithoutCall(() => literal(amount), 'BAD_USER_INPUT');
    }
  });

  it('FORBIDDEN for an end user, even with the payment in its txRefs claim, and for kyc:read alone', async () => {
    const endUser = await gateway.token({ scope: null, txRefs: ['NT-PAID1'] });
    await refusedWithoutCall(() => confirm('NT-PAID1', {}, endUser), 'FORBIDDEN');
    const kycOnly = await gateway.token({ scope: 'kyc:read' });
    await refusedWithoutCall(() => confirm('NT-PAID1', {}, kycOnly), 'FORBIDDEN');
    // The scope is checked before the arguments: nothing is learnt about them either.
    await refusedWithoutCall(() => confirm('NT-', { amount: '-1' }, endUser), 'FORBIDDEN');
  });

  it('401 without a token', async () => {
    const before = payment.requests.length;
    const response = await confirm('NT-PAID1', {}, null);
    expect(response.status).toBe(401);
    expect(codesOf(response)).toEqual(['UNAUTHENTICATED']);
    expect(payment.requests.length).toBe(before);
  });
});

describe('metrics', () => {
  it('counts gateway_payment_confirmations_total by outcome: confirmed or the first problem', async () => {
    const count = (outcome: string) =>
      metric(gateway, 'gateway_payment_confirmations_total', { outcome });
    const [confirmedBefore, notFoundBefore, failedBefore, anotherBefore] = await Promise.all([
      count('confirmed'),
      count('NOT_FOUND'),
      count('NOT_SUCCESSFUL'),
      count('ALREADY_CONFIRMED_FOR_ANOTHER_ORDER'),
    ]);
    await confirmed('NT-PAID1', { id: 'order-1' });
    await confirmed('NT-UNKNOWN2');
    await confirmed('NT-ALLWRONG1', { amount: '10000', merchantRef: 'ORDER-1' });
    await confirmed('NT-PAID1', { id: 'order-metrics-other' });
    expect(await count('confirmed')).toBe(confirmedBefore + 1);
    expect(await count('NOT_FOUND')).toBe(notFoundBefore + 1);
    expect(await count('NOT_SUCCESSFUL')).toBe(failedBefore + 1);
    expect(await count('ALREADY_CONFIRMED_FOR_ANOTHER_ORDER')).toBe(anotherBefore + 1);
  });
});

describe('the checkout recipe of docs/payments.md, against the sandbox', () => {
  it('the typed client confirms NT-SUCCESS001 for order 1001 once, and the curl call of the docs answers as they say', async () => {
    const { createGatewayClient, ConfirmPaymentDocument: Document } = await import(
      '../../src/client/index.ts'
    );
    const { gateway: sandboxGateway, token: every, close } = await startSandboxGateway();
    try {
      const client = createGatewayClient({ url: `${sandboxGateway.url}/graphql`, token: every });
      const order = { id: '1001', amount: '15000.50', currency: 'NGN', merchantRef: 'ORDER-1001' };
      const first = await client.request(Document, { txRef: 'NT-SUCCESS001', order });
      expect(first.data?.confirmPayment).toMatchObject({ confirmed: true, problems: [] });
      const replay = await client.request(Document, {
        txRef: 'NT-SUCCESS001',
        order: { ...order, id: '1002' },
      });
      expect(replay.data?.confirmPayment.problems).toEqual(['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER']);
      const failed = await client.request(Document, { txRef: 'NT-FAILED001', order });
      expect(failed.data?.confirmPayment.problems).toContain('NOT_SUCCESSFUL');
      const usd = await client.request(Document, {
        txRef: 'NT-USD001',
        order: { id: '2001', amount: '19.99', currency: 'usd', merchantRef: 'ORDER-2001' },
      });
      expect(usd.data?.confirmPayment.confirmed).toBe(true);

      // The curl example, as written in the docs (same order id: the same answer).
      const doc = readFileSync('docs/payments.md', 'utf8');
      const body = /-d '([\s\S]*?)'\n/.exec(doc)?.[1];
      const shown = /\n# (\{"data":\{"confirmPayment".*\})\n/.exec(doc)?.[1];
      if (body === undefined || shown === undefined) throw new Error('no curl example');
      const response = await fetch(`${sandboxGateway.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${every}` },
        body,
      });
      expect(await response.json()).toEqual(JSON.parse(shown));
    } finally {
      await close();
    }
  });
});
