import { describe, expect, it } from 'vitest';
import { moneyOfExact, type UpstreamTransaction } from '../../src/model/records.ts';
import {
  describeIssue,
  moneySourceReviver,
  scanJson,
  type UpstreamIssue,
  upstreamShapes,
} from '../../src/upstream/shapes.ts';

const { transactionResponse: transactionResponseShape, kycResponse: kycResponseShape } =
  upstreamShapes('UTC');

type Json = Record<string, unknown>;

/** What the schema's `…Money` fields serve for the amounts of a record read. */
function moneys(data: Omit<UpstreamTransaction, 'txRef' | 'event'>) {
  return {
    amountMoney: moneyOfExact(data.amountExact, data.currency),
    appFeeMoney: moneyOfExact(data.appFeeExact, data.currency),
    merchantFeeMoney: moneyOfExact(data.merchantFeeExact, data.currency),
  };
}

function transactionBody(data: Json = {}, top: Json = {}): Json {
  return {
    event: 'PAYMENT_FAILED',
    data: {
      amount: 15000.5,
      appFee: 225.01,
      merchantFee: 0,
      txIsSucces: false,
      currency: 'NGN',
      checkoutPoint: 'https://shop.example/checkout',
      paymentRef: 'PAY-123',
      merchantRef: 'M-456',
      paymentChannel: 'Card',
      deviceFingerPrint: 'fp-789',
      message: 'Insufficient funds',
      txStatus: 'FAILED',
      txTimestamp: 'Jan 5, 2024, 3:04:05 PM',
      customer: {
        fullname: 'Ada Obi',
        email: 'ada@example.com',
        phone: '2348012345678',
        joinedAt: 'Dec 1, 2023, 9:00:00 AM',
      },
      card: { first: '411111', last: '1111', expiry: '12/27', cardType: 'VISA' },
      ...data,
    },
    ...top,
  };
}

function kycBody(data: Json = {}): Json {
  return {
    message: 'KYC details retrieved',
    error: false,
    data: {
      userRef: 'user-1',
      name: 'Ada Obi',
      status: true,
      level: 1,
      levels: [
        {
          level: 1,
          levelName: 'Tier 1',
          levelSlug: 'tier_1',
          status: true,
          kyc: [
            {
              name: 'gender',
              status: true,
              query: { gender: 'female' },
              result: {},
              createdAt: '05-01-2024 15:04:05',
              updatedAt: '31-12-2024 23:59:59',
            },
          ],
        },
      ],
      ...data,
    },
  };
}

function parseTransaction(body: unknown) {
  const result = transactionResponseShape.safeParse(body);
  if (!result.success) throw new Error(`expected success: ${describeIssue(result.error)}`);
  return result.data;
}

function transactionError(body: unknown): UpstreamIssue {
  const result = transactionResponseShape.safeParse(body);
  if (result.success) throw new Error('expected the record to be rejected');
  return result.error;
}

function parseKyc(body: unknown) {
  const result = kycResponseShape.safeParse(body);
  if (!result.success) throw new Error(`expected success: ${describeIssue(result.error)}`);
  return result.data;
}

describe('transactionResponseShape', () => {
  it('accepts a full valid record and normalizes every field once', () => {
    expect(moneys(parseTransaction(transactionBody()).data)).toEqual({
      amountMoney: { amount: '15000.50', currency: 'NGN', minorUnits: 2, amountMinor: '1500050' },
      appFeeMoney: { amount: '225.01', currency: 'NGN', minorUnits: 2, amountMinor: '22501' },
      merchantFeeMoney: { amount: '0.00', currency: 'NGN', minorUnits: 2, amountMinor: '0' },
    });
    expect(parseTransaction(transactionBody())).toEqual({
      event: 'PAYMENT_FAILED',
      data: {
        status: 'FAILED',
        rawStatus: 'FAILED',
        succeeded: false,
        amount: 15000.5,
        appFee: 225.01,
        merchantFee: 0,
        amountExact: 15000.5,
        appFeeExact: 225.01,
        merchantFeeExact: 0,
        currency: 'NGN',
        checkoutPoint: 'https://shop.example/checkout',
        paymentRef: 'PAY-123',
        merchantRef: 'M-456',
        paymentChannel: 'Card',
        deviceFingerprint: 'fp-789',
        message: 'Insufficient funds',
        timestamp: '2024-01-05T15:04:05.000Z',
        customer: {
          fullName: 'Ada Obi',
          email: 'ada@example.com',
          phone: '2348012345678',
          joinedAt: '2023-12-01T09:00:00.000Z',
        },
        card: {
          first6: '411111',
          last4: '1111',
          expiry: '12/27',
          expiryMonth: 12,
          expiryYear: 2027,
          cardType: 'VISA',
          masked: '411111******1111',
        },
      },
    });
  });

  it('makes a record that survives JSON unchanged (what Redis stores)', () => {
    const output = parseTransaction(transactionBody({ txTimestamp: 'yesterday-ish' }));
    expect(JSON.parse(JSON.stringify(output))).toEqual(output);
  });

  it('reads the times in the zone the shapes were built for', () => {
    const { data } = upstreamShapes('Africa/Lagos').transactionResponse.parse(transactionBody());
    expect(data.timestamp).toBe('2024-01-05T14:04:05.000Z');
    expect(data.customer?.joinedAt).toBe('2023-12-01T08:00:00.000Z');
    expect(upstreamShapes('Africa/Lagos')).toBe(upstreamShapes('Africa/Lagos'));
  });

  it('marks an unreadable time instead of rejecting the record', () => {
    const { data } = parseTransaction(
      transactionBody({
        txTimestamp: 'yesterday-ish',
        customer: { fullname: 'Ada', joinedAt: 'Feb 30, 2024, 1:00:00 PM' },
      }),
    );
    expect(data.timestamp).toEqual({ unreadable: true });
    expect(data.customer?.joinedAt).toEqual({ unreadable: true });
    expect(data.status).toBe('FAILED');
  });

  it('maps the status and keeps the raw value, whatever it is', () => {
    expect(parseTransaction(transactionBody({ txStatus: ' succeeded ' })).data).toMatchObject({
      status: 'SUCCESSFUL',
      rawStatus: ' succeeded ',
    });
    expect(parseTransaction(transactionBody({ txStatus: 'REVERSED' })).data).toMatchObject({
      status: 'UNKNOWN',
      rawStatus: 'REVERSED',
    });
  });

  it('accepts amounts as numeric strings, as the same exact decimals', () => {
    const { data } = parseTransaction(
      transactionBody({ amount: '15000.50', appFee: '225', merchantFee: ' -1.5 ' }),
    );
    expect(data.amount).toBe(15000.5);
    expect(data.appFee).toBe(225);
    expect(data.merchantFee).toBe(-1.5);
    expect(moneys(data).amountMoney).toMatchObject({ amount: '15000.50', amountMinor: '1500050' });
    expect(moneys(data).appFeeMoney).toMatchObject({ amount: '225.00', amountMinor: '22500' });
    expect(moneys(data).merchantFeeMoney).toMatchObject({ amount: '-1.50', amountMinor: '-150' });
  });

  it('states amounts in the currency, trimmed and in capitals', () => {
    const { data } = parseTransaction(
      transactionBody({ currency: ' kwd ', amount: '10.125', appFee: 1, merchantFee: null }),
    );
    expect(data.currency).toBe('KWD');
    expect(data.amount).toBe(10.125);
    expect(moneys(data).amountMoney).toEqual({
      amount: '10.125',
      currency: 'KWD',
      minorUnits: 3,
      amountMinor: '10125',
    });
    expect(moneys(data).appFeeMoney).toMatchObject({ amount: '1.000', amountMinor: '1000' });
    expect(moneys(data).merchantFeeMoney).toBeNull();
  });

  it('marks the amounts unreadable when there is no currency to state them in', () => {
    const { data } = parseTransaction(transactionBody({ currency: '  ', merchantFee: null }));
    expect(data.currency).toBeNull();
    expect(data.amount).toBe(15000.5);
    expect(moneys(data).amountMoney).toEqual({ unreadable: true });
    expect(moneys(data).merchantFeeMoney).toBeNull();
  });

  it('reads amounts exactly from the JSON text through moneySourceReviver', () => {
    const text =
      '{"data":{"txStatus":"SUCCESSFUL","currency":"NGN","amount":12345678901234567.89,' +
      '"appFee":0.30000000000000004,"merchantFee":1500.505,"customer":{"amount":1.10}}}';
    const { data } = parseTransaction(JSON.parse(text, moneySourceReviver));
    expect(moneys(data).amountMoney).toMatchObject({
      amount: '12345678901234567.89',
      amountMinor: '1234567890123456789',
    });
    expect(moneys(data).appFeeMoney).toMatchObject({
      amount: '0.30000000000000004',
      amountMinor: '30',
    });
    expect(data.appFee).toBe(0.3);
    expect(moneys(data).merchantFeeMoney).toMatchObject({
      amount: '1500.505',
      amountMinor: '150051',
    });
    expect(data.merchantFee).toBe(1500.51);
  });

  it('accepts an amount in exponent notation, exactly', () => {
    const text = '{"data":{"txStatus":"S","currency":"NGN","amount":1.5E3,"appFee":25e-3}}';
    const { data } = parseTransaction(JSON.parse(text, moneySourceReviver));
    expect(moneys(data).amountMoney).toMatchObject({ amount: '1500.00', amountMinor: '150000' });
    expect(moneys(data).appFeeMoney).toMatchObject({ amount: '0.025', amountMinor: '3' });
  });

  it('rejects an amount that is not a number', () => {
    const error = transactionError(transactionBody({ amount: 'lots' }));
    expect(describeIssue(error)).toContain('data.amount');
  });

  it('rejects an amount of the wrong JSON type', () => {
    expect(transactionResponseShape.safeParse(transactionBody({ appFee: true })).success).toBe(
      false,
    );
    expect(transactionResponseShape.safeParse(transactionBody({ appFee: {} })).success).toBe(false);
  });

  it('never turns a numeric string into a non-finite amount', () => {
    // 400 nines: matches the decimal pattern but Number() of it is Infinity.
    const result = transactionResponseShape.safeParse(transactionBody({ amount: '9'.repeat(400) }));
    expect(result.success).toBe(false);
  });

  it('refuses an exponent that would expand an amount without bound', () => {
    const text = '{"data":{"txStatus":"S","currency":"NGN","amount":1e-99999999}}';
    const result = transactionResponseShape.safeParse(JSON.parse(text, moneySourceReviver));
    expect(result.success).toBe(false);
    if (!result.success) expect(describeIssue(result.error)).toContain('data.amount');
  });

  it('names only its own path in each refusal, whatever the body read before it refused', () => {
    // A refusal deep in the card, then one at the top of data, then a body read in full.
    const card = transactionError(transactionBody({ card: { cardType: {} } }));
    expect(card.path).toEqual(['data', 'card', 'cardType']);
    const top = transactionError(transactionBody({ txStatus: 2 }));
    expect(top.path).toEqual(['data', 'txStatus']);
    expect(parseTransaction(transactionBody()).data.status).toBe('FAILED');
    expect(transactionError(transactionBody({ amount: 'lots' })).path).toEqual(['data', 'amount']);
  });

  it('rejects a record without txStatus', () => {
    const body = transactionBody();
    delete (body.data as Json).txStatus;
    const error = transactionError(body);
    expect(describeIssue(error)).toContain('data.txStatus');
  });

  it('rejects a numeric txStatus', () => {
    const error = transactionError(transactionBody({ txStatus: 2 }));
    expect(describeIssue(error)).toContain('data.txStatus');
  });

  it('rejects a body without data', () => {
    expect(transactionResponseShape.safeParse({ event: 'X' }).success).toBe(false);
    expect(transactionResponseShape.safeParse(null).success).toBe(false);
  });

  it('accepts a minimal record and makes missing fields null', () => {
    const { event, data } = parseTransaction({ data: { txStatus: 'PENDING' } });
    expect(event).toBeNull();
    expect(data.status).toBe('PENDING');
    expect(data.rawStatus).toBe('PENDING');
    expect(data.amount).toBeNull();
    expect(moneys(data).amountMoney).toBeNull();
    expect(data.succeeded).toBe(false);
    expect(data.currency).toBeNull();
    expect(data.timestamp).toBeNull();
    expect(data.customer).toBeNull();
    expect(data.card).toBeNull();
  });

  it('makes a missing or null customer and card null', () => {
    const body = transactionBody({ card: null });
    delete (body.data as Json).customer;
    const { data } = parseTransaction(body);
    expect(data.customer).toBeNull();
    expect(data.card).toBeNull();
  });

  it('drops unknown extra fields at every level', () => {
    const body = transactionBody(
      {
        internalNote: 'drop me',
        customer: { fullname: 'Ada', bvn: '12345678901' },
        card: { first: '411111', last: '1111', cvv: '123' },
      },
      { signature: 'abc' },
    );
    const output = parseTransaction(body);
    expect(output).not.toHaveProperty('signature');
    expect(output.data).not.toHaveProperty('internalNote');
    expect(output.data.customer).not.toHaveProperty('bvn');
    expect(output.data.card).not.toHaveProperty('cvv');
    const json = JSON.stringify(output);
    expect(json).not.toContain('drop me');
    expect(json).not.toContain('12345678901');
  });

  it('keeps at most six leading and four trailing card digits', () => {
    const pan = '4111111111111111';
    const output = parseTransaction(transactionBody({ card: { first: pan, last: pan } }));
    expect(output.data.card?.first6).toBe('411111');
    expect(output.data.card?.last4).toBe('1111');
    expect(output.data.card?.masked).toBe('411111******1111');
    expect(JSON.stringify(output)).not.toContain(pan);
  });

  it('cuts a PAN with separators or sent as a JSON number', () => {
    const output = parseTransaction(
      transactionBody({ card: { first: '5399 8312 3456 7890', last: 5399831234567890 } }),
    );
    expect(output.data.card?.first6).toBe('539983');
    expect(output.data.card?.last4).toBe('7890');
    const json = JSON.stringify(output);
    expect(json).not.toContain('5399831234567890');
    expect(json).not.toContain('5399 8312 3456 7890');
  });

  it('makes card digits without any digit null', () => {
    const output = parseTransaction(transactionBody({ card: { first: '', last: '****' } }));
    expect(output.data.card?.first6).toBeNull();
    expect(output.data.card?.last4).toBeNull();
    expect(output.data.card?.masked).toBeNull();
  });

  it('turns a phone sent as a JSON number into a string', () => {
    const output = parseTransaction(
      transactionBody({ customer: { fullname: 'Ada', phone: 2348012345678 } }),
    );
    expect(output.data.customer?.phone).toBe('2348012345678');
  });

  it('splits the card expiry into month and four-digit year, null when unreadable', () => {
    const card = (expiry: unknown) =>
      parseTransaction(transactionBody({ card: { first: '411111', last: '1111', expiry } })).data
        .card;
    expect(card('1/30')).toMatchObject({ expiry: '1/30', expiryMonth: 1, expiryYear: 2030 });
    expect(card('13/30')).toMatchObject({ expiry: '13/30', expiryMonth: null, expiryYear: null });
    expect(card(null)).toMatchObject({ expiry: null, expiryMonth: null, expiryYear: null });
  });

  it('accepts txIsSucces as a "true" or "false" string', () => {
    expect(parseTransaction(transactionBody({ txIsSucces: 'true' })).data.succeeded).toBe(true);
    expect(parseTransaction(transactionBody({ txIsSucces: 'false' })).data.succeeded).toBe(false);
  });

  it('rejects txIsSucces as "yes"', () => {
    const error = transactionError(transactionBody({ txIsSucces: 'yes' }));
    expect(describeIssue(error)).toContain('data.txIsSucces');
  });
});

describe('kycResponseShape', () => {
  it('accepts a valid record and names its fields as the schema does', () => {
    expect(parseKyc(kycBody())).toEqual({
      message: 'KYC details retrieved',
      error: false,
      data: {
        userRef: 'user-1',
        name: 'Ada Obi',
        verified: true,
        level: 1,
        levels: [
          {
            level: 1,
            name: 'Tier 1',
            slug: 'tier_1',
            verified: true,
            checks: [
              {
                name: 'gender',
                passed: true,
                query: { gender: 'female' },
                result: {},
                createdAt: '2024-01-05T15:04:05.000Z',
                updatedAt: '2024-12-31T23:59:59.000Z',
              },
            ],
          },
        ],
      },
    });
  });

  it('reads check times in the zone, and marks an unreadable one', () => {
    const { data } = upstreamShapes('America/New_York').kycResponse.parse(
      kycBody({
        levels: [
          {
            level: 1,
            levelSlug: 'tier_1',
            kyc: [
              { name: 'a', createdAt: '05-07-2024 15:04:05', updatedAt: '31-02-2024 10:00:00' },
            ],
          },
        ],
      }),
    );
    expect(data.levels[0]?.checks[0]).toMatchObject({
      createdAt: '2024-07-05T19:04:05.000Z',
      updatedAt: { unreadable: true },
    });
  });

  it('rejects a record without levels', () => {
    const body = kycBody();
    delete (body.data as Json).levels;
    const result = kycResponseShape.safeParse(body);
    expect(result.success).toBe(false);
    if (!result.success) expect(describeIssue(result.error)).toContain('data.levels');
  });

  it('rejects levels that are not an array', () => {
    for (const levels of [{}, 'tier_1', 1, null]) {
      expect(kycResponseShape.safeParse(kycBody({ levels })).success, JSON.stringify(levels)).toBe(
        false,
      );
    }
  });

  it('accepts an empty levels array', () => {
    expect(parseKyc(kycBody({ levels: [] })).data.levels).toEqual([]);
  });

  it('accepts a level number sent as a string', () => {
    const output = parseKyc(
      kycBody({
        level: '2',
        levels: [{ level: '2', levelSlug: 'tier_2', status: false, kyc: [] }],
      }),
    );
    expect(output.data.level).toBe(2);
    expect(output.data.levels[0]?.level).toBe(2);
  });

  it('rejects a level that is not a whole number', () => {
    expect(kycResponseShape.safeParse(kycBody({ level: '2.5' })).success).toBe(false);
    expect(kycResponseShape.safeParse(kycBody({ level: 'two' })).success).toBe(false);
  });

  it('rejects a check without a name', () => {
    const result = kycResponseShape.safeParse(
      kycBody({
        levels: [{ level: 1, levelSlug: 'tier_1', status: true, kyc: [{ status: true }] }],
      }),
    );
    expect(result.success).toBe(false);
    if (!result.success) expect(describeIssue(result.error)).toContain('data.levels.0.kyc.0.name');
  });

  it('keeps query and result of any JSON type as they are', () => {
    const query = { gender: 'female', nested: { list: [1, 'two', null, true] } };
    const output = parseKyc(
      kycBody({
        levels: [
          {
            level: 1,
            levelSlug: 'tier_1',
            status: true,
            kyc: [
              { name: 'gender', status: true, query, result: [1, 2, 3] },
              { name: 'selfie', status: false, query: 'text', result: 42 },
              { name: 'address', status: false, query: null, result: false },
              { name: 'phone', status: false },
            ],
          },
        ],
      }),
    );
    const checks = output.data.levels[0]?.checks ?? [];
    expect(checks.map((c) => [c.query, c.result])).toEqual([
      [query, [1, 2, 3]],
      ['text', 42],
      [null, false],
      [null, null],
    ]);
  });

  it('defaults missing level status and checks', () => {
    const output = parseKyc(kycBody({ levels: [{ level: 1, levelSlug: 'tier_1' }] }));
    expect(output.data.levels[0]).toMatchObject({ verified: false, checks: [], name: null });
  });
});

describe('describeIssue', () => {
  it('names the field path without the offending value', () => {
    const error = transactionError(transactionBody({ amount: 'secret-value-123' }));
    const description = describeIssue(error);
    expect(description).toContain('data.amount');
    expect(description).not.toContain('secret-value-123');
  });

  it('does not quote a wrongly typed nested value', () => {
    const error = transactionError(
      transactionBody({ customer: { email: { secret: 'hunter2-private' } } }),
    );
    const description = describeIssue(error);
    expect(description).toContain('data.customer.email');
    expect(description).not.toContain('hunter2-private');
  });

  it('says "the body" when the whole value is wrong', () => {
    const result = kycResponseShape.safeParse('not an object');
    expect(result.success).toBe(false);
    if (!result.success) expect(describeIssue(result.error)).toMatch(/^the body /);
  });
});

describe('scanJson: the bounds checked before an upstream body is parsed', () => {
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('accepts 64 levels of nesting and refuses 65', () => {
    expect(scanJson(nested(64))).toEqual({ ok: true, longDigits: false });
    expect(scanJson(nested(65))).toEqual({ ok: false, reason: 'the body is nested too deeply' });
    expect(scanJson(`{"a":${nested(63)}}`).ok).toBe(true);
    expect(scanJson(`{"a":${nested(64)}}`).ok).toBe(false);
  });

  it('accepts a number of 100 characters and refuses 101', () => {
    expect(scanJson(`{"amount":${'9'.repeat(100)}}`).ok).toBe(true);
    expect(scanJson(`{"amount":-${'9'.repeat(100)}}`)).toEqual({
      ok: false,
      reason: 'the body holds an oversized number',
    });
    expect(scanJson(`[1.5e+${'1'.repeat(96)}]`).ok).toBe(false);
  });

  it('skips strings, escapes included: brackets and digits in them count for nothing', () => {
    const text = JSON.stringify({ note: `${'['.repeat(100)}\\"${'7'.repeat(500)}`, n: 1 });
    expect(scanJson(text)).toEqual({ ok: true, longDigits: false });
    expect(scanJson('{"a":"\\\\","b":[[1]]}').ok).toBe(true);
  });

  it('says when a number has more digits than a double keeps (the exact-money reviver is needed)', () => {
    expect(scanJson('{"amount":10.125}').ok && scanJson('{"amount":10.125}')).toEqual({
      ok: true,
      longDigits: false,
    });
    expect(scanJson('{"amount":12345678901234567.89}')).toEqual({ ok: true, longDigits: true });
  });
});
