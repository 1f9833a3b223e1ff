/**
 * Property tests (fast-check) of `confirmPayment`'s comparison, against plain integer arithmetic
 * on minor units. Each record is made the way the gateway makes it: an upstream answer as JSON
 * text, read by the payment client's own reader (`readAnswer` with the money reviver) into the
 * normalized record and its `Money`; each order goes through `readOrder`. Currencies with 0, 2
 * and 3 minor digits are drawn from the whole ISO 4217 table. Amounts reach 10^24 minor units,
 * far beyond what a double holds exactly.
 *
 *   CONFIRM_RUNS=20000 CONFIRM_SEED=7 npx vitest run test/unit/confirmation.property.test.ts
 */
import currencyCodes from 'currency-codes';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.ts';
import type { OrderInput, PaymentProblem } from '../../src/graphql/generated/resolvers-types.ts';
import type { UpstreamTransaction } from '../../src/model/records.ts';
import { MemoryClaimStore } from '../../src/payments/claims.ts';
import {
  compareWithOrder,
  PaymentConfirmations,
  readOrder,
} from '../../src/payments/confirmation.ts';
import { readAnswer } from '../../src/upstream/clients.ts';
import { moneySourceReviver, upstreamShapes } from '../../src/upstream/shapes.ts';

const SEED = process.env.CONFIRM_SEED ? Number(process.env.CONFIRM_SEED) : 20_261_125;
const RUNS = process.env.CONFIRM_RUNS ? Number(process.env.CONFIRM_RUNS) : 2000;
const options = { seed: SEED, numRuns: RUNS };

/** ISO 4217 codes by their minor digits (0: JPY, KRW…; 2: NGN, USD…; 3: KWD, BHD…). */
const CODES_BY_DIGITS = new Map(
  [0, 2, 3].map((digits) => [
    digits,
    currencyCodes.data.filter((record) => record.digits === digits).map((record) => record.code),
  ]),
);

const currency = fc.constantFrom(0, 2, 3).chain((digits) =>
  fc.record({
    digits: fc.constant(digits),
    code: fc.constantFrom(...(CODES_BY_DIGITS.get(digits) ?? [])),
  }),
);

/** A whole number of minor units, weighted towards small values and edges. */
const minor = fc.oneof(
  fc.bigInt({ min: 1n, max: 1000n }),
  fc.bigInt({ min: 1n, max: 10n ** 12n }),
  fc.bigInt({ min: 1n, max: 10n ** 24n }),
);

/** `units / 10^scale` in plain notation, with `scale` digits after the point. */
function written(units: bigint, scale: number): string {
  const text = units.toString().padStart(scale + 1, '0');
  return scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
}

/** The text with trailing fraction zeros dropped (and the point, when none is left). */
function trimmed(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** Mixed case, as merchants write codes. */
function anyCase(code: string, mask: number): string {
  return [...code].map((c, i) => ((mask >> i) & 1 ? c.toLowerCase() : c)).join('');
}

/** A payment record read from JSON text by the payment client's own reader. */
function record(amountJson: string, code: string, status = 'SUCCESSFUL'): UpstreamTransaction {
  const body = `{"event":"PAYMENT_SUCCESSFUL","data":{"txStatus":"${status}","txIsSucces":true,"currency":"${code}","amount":${amountJson},"merchantRef":"M-1"}}`;
  const answer = readAnswer(
    'payment',
    { status: 200, headers: {}, body, attempts: 1 },
    upstreamShapes('UTC').transactionResponse,
    moneySourceReviver,
  );
  if (answer === null) throw new Error('no record');
  return Object.assign(answer.data, { txRef: 'NT-PROP1', event: answer.event });
}

/** What integer arithmetic says of paid vs ordered, both in the same unit. */
function expected(paid: bigint, ordered: bigint): PaymentProblem[] {
  if (paid < ordered) return ['AMOUNT_TOO_LOW'];
  if (paid > ordered) return ['AMOUNT_TOO_HIGH'];
  return [];
}

const order = (fields: Partial<OrderInput> & Pick<OrderInput, 'amount' | 'currency'>) =>
  readOrder({ id: 'order-1', ...fields });

/** Runs of each property, stated in the test names and the closing note. */
const counts: Record<string, number> = {};

function check<T>(name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => void) {
  let runs = 0;
  fc.assert(
    fc.property(arbitrary, (value) => {
      predicate(value);
      // Counted once it passed: a case skipped by fc.pre is not a run.
      runs += 1;
    }),
    options,
  );
  counts[name] = runs;
  expect(runs).toBe(RUNS);
}

describe(`confirmPayment's comparison (seed ${SEED}, ${RUNS} runs per property)`, () => {
  it('agrees with integer arithmetic on minor units (amounts as JSON numbers or strings, order in any case, trailing zeros or not)', () => {
    check(
      'same scale',
      fc.record({
        currency,
        paid: minor,
        ordered: minor,
        near: fc.integer({ min: -2, max: 2 }),
        useNear: fc.boolean(),
        asString: fc.boolean(),
        trim: fc.boolean(),
        mask: fc.nat(7),
      }),
      ({ currency: { digits, code }, paid, ordered, near, useNear, asString, trim, mask }) => {
        // Half the time the order is within 2 minor units of the payment: the edges.
        const orderedUnits = useNear && paid + BigInt(near) > 0n ? paid + BigInt(near) : ordered;
        const paidText = written(paid, digits);
        const tx = record(asString ? `"${paidText}"` : paidText, code);
        const orderText = written(orderedUnits, digits);
        const checked = order({
          amount: trim ? trimmed(orderText) : orderText,
          currency: anyCase(code, mask),
        });
        expect(compareWithOrder(tx, checked)).toEqual(expected(paid, orderedUnits));
      },
    );
  });

  it('compares digits the payment service sent beyond the minor unit exactly (never rounded to match)', () => {
    check(
      'extra digits',
      fc.record({ currency, paid: minor, ordered: minor, extra: fc.integer({ min: 1, max: 3 }) }),
      ({ currency: { digits, code }, paid, ordered, extra }) => {
        const tx = record(written(paid, digits + extra), code);
        const checked = order({ amount: written(ordered, digits), currency: code });
        // The order in the record's finer unit.
        expect(compareWithOrder(tx, checked)).toEqual(
          expected(paid, ordered * 10n ** BigInt(extra)),
        );
      },
    );
  });

  it('reports only CURRENCY_MISMATCH in another currency, whatever the amounts', () => {
    check(
      'other currency',
      fc.record({ a: currency, b: currency, paid: minor, ordered: minor }),
      ({ a, b, paid, ordered }) => {
        fc.pre(a.code !== b.code);
        const tx = record(written(paid, a.digits), a.code);
        const checked = order({ amount: written(ordered, b.digits), currency: b.code });
        expect(compareWithOrder(tx, checked)).toEqual(['CURRENCY_MISMATCH']);
      },
    );
  });

  it('refuses an order amount with more digits than its currency has, zero, or any sign or exponent', () => {
    check(
      'order amounts',
      fc.record({
        currency,
        units: fc.bigInt({ min: 0n, max: 10n ** 20n }),
        scale: fc.integer({ min: 0, max: 5 }),
        form: fc.constantFrom('plain', 'minus', 'plus', 'exponent'),
      }),
      ({ currency: { digits, code }, units, scale, form }) => {
        const text = written(units, scale);
        const amount =
          form === 'minus'
            ? `-${text}`
            : form === 'plus'
              ? `+${text}`
              : form === 'exponent'
                ? `${text}e0`
                : text;
        const accepted = form === 'plain' && units > 0n && scale <= digits;
        const attempt = () => order({ amount, currency: code });
        if (accepted) {
          const checked = attempt();
          // The order's value is exactly the units written.
          expect(checked.amount.unscaled * 10n ** BigInt(digits - checked.amount.scale)).toBe(
            units * 10n ** BigInt(digits - scale),
          );
        } else {
          expect(attempt).toThrow(GatewayError);
        }
      },
    );
  });

  it('claims a payment for at most one order, and answers its holder the same every time', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ id: fc.constantFrom('A', 'B', 'C'), pays: fc.boolean() }), {
          minLength: 1,
          maxLength: 12,
        }),
        async (attempts) => {
          runs += 1;
          const confirmations = new PaymentConfirmations(new MemoryClaimStore(60_000), () => {});
          const tx = record('1500.50', 'NGN');
          let holder: string | undefined;
          for (const { id, pays } of attempts) {
            const checked = order({ id, amount: pays ? '1500.50' : '1500.49', currency: 'NGN' });
            const answer = await confirmations.confirm('NT-PROP1', checked, tx);
            // The model: the first order that pays holds the payment from then on.
            if (pays && holder === undefined) holder = id;
            const taken = holder !== undefined && holder !== id;
            expect(answer.confirmed).toBe(pays && holder === id);
            expect(answer.problems).toEqual([
              ...(pays ? [] : ['AMOUNT_TOO_HIGH']),
              ...(taken ? ['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER'] : []),
            ]);
          }
        },
      ),
      options,
    );
    counts.claims = runs;
    expect(runs).toBe(RUNS);
    console.info(
      `confirmation properties: seed=${SEED}, runs ${JSON.stringify(counts)} (override with CONFIRM_SEED / CONFIRM_RUNS)`,
    );
  });
});
