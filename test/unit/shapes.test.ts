import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  describeIssue,
  kycResponseShape,
  transactionResponseShape,
} from '../../src/upstream/shapes.ts';

type Json = Record<string, unknown>;

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

function transactionError(body: unknown): z.ZodError {
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
  it('accepts a full valid record and keeps every field', () => {
    expect(parseTransaction(transactionBody())).toEqual({
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
      },
    });
  });

  it('accepts amounts as numeric strings and makes them numbers', () => {
    const { data } = parseTransaction(
      transactionBody({ amount: '15000.50', appFee: '225', merchantFee: ' -1.5 ' }),
    );
    expect(data.amount).toBe(15000.5);
    expect(data.appFee).toBe(225);
    expect(data.merchantFee).toBe(-1.5);
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
    expect(data.txStatus).toBe('PENDING');
    expect(data.amount).toBeNull();
    expect(data.txIsSucces).toBeNull();
    expect(data.currency).toBeNull();
    expect(data.txTimestamp).toBeNull();
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
    expect(output.data.card?.first).toBe('411111');
    expect(output.data.card?.last).toBe('1111');
    expect(JSON.stringify(output)).not.toContain(pan);
  });

  it('cuts a PAN with separators or sent as a JSON number', () => {
    const output = parseTransaction(
      transactionBody({ card: { first: '5399 8312 3456 7890', last: 5399831234567890 } }),
    );
    expect(output.data.card?.first).toBe('539983');
    expect(output.data.card?.last).toBe('7890');
    const json = JSON.stringify(output);
    expect(json).not.toContain('5399831234567890');
    expect(json).not.toContain('5399 8312 3456 7890');
  });

  it('makes card digits without any digit null', () => {
    const output = parseTransaction(transactionBody({ card: { first: '', last: '****' } }));
    expect(output.data.card?.first).toBeNull();
    expect(output.data.card?.last).toBeNull();
  });

  it('turns a phone sent as a JSON number into a string', () => {
    const output = parseTransaction(
      transactionBody({ customer: { fullname: 'Ada', phone: 2348012345678 } }),
    );
    expect(output.data.customer?.phone).toBe('2348012345678');
  });

  it('accepts txIsSucces as a "true" or "false" string', () => {
    expect(parseTransaction(transactionBody({ txIsSucces: 'true' })).data.txIsSucces).toBe(true);
    expect(parseTransaction(transactionBody({ txIsSucces: 'false' })).data.txIsSucces).toBe(false);
  });

  it('rejects txIsSucces as "yes"', () => {
    const error = transactionError(transactionBody({ txIsSucces: 'yes' }));
    expect(describeIssue(error)).toContain('data.txIsSucces');
  });
});

describe('kycResponseShape', () => {
  it('accepts a valid record', () => {
    expect(parseKyc(kycBody())).toEqual({
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
      },
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
    const checks = output.data.levels[0]?.kyc ?? [];
    expect(checks.map((c) => [c.query, c.result])).toEqual([
      [query, [1, 2, 3]],
      ['text', 42],
      [null, false],
      [null, null],
    ]);
  });

  it('defaults missing level status and checks', () => {
    const output = parseKyc(kycBody({ levels: [{ level: 1, levelSlug: 'tier_1' }] }));
    expect(output.data.levels[0]).toMatchObject({ status: false, kyc: [], levelName: null });
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
