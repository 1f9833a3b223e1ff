import { describe, expect, it } from 'vitest';
import {
  type Decimal,
  decimalOfDouble,
  formatDecimal,
  minorUnitsOf,
  parseDecimal,
  roundToPlaces,
  toMoney,
  toRoundedNumber,
} from '../../src/model/money.ts';
import { moneyOfExact, UNREADABLE } from '../../src/model/records.ts';

function decimal(text: string): Decimal {
  const value = parseDecimal(text);
  if (value === undefined) throw new Error(`expected ${text} to be a decimal`);
  return value;
}

const money = (text: string, currency: string) => toMoney(decimal(text), currency);
const rounded = (text: string, currency: string) =>
  toRoundedNumber(decimal(text), minorUnitsOf(currency));

describe('minorUnitsOf (ISO 4217)', () => {
  it('knows the exponents of common currencies', () => {
    expect(minorUnitsOf('NGN')).toBe(2);
    expect(minorUnitsOf('USD')).toBe(2);
    expect(minorUnitsOf('JPY')).toBe(0);
    expect(minorUnitsOf('KWD')).toBe(3);
    expect(minorUnitsOf('BHD')).toBe(3);
    expect(minorUnitsOf('CLF')).toBe(4);
  });

  it('is 2 for a code it does not know', () => {
    expect(minorUnitsOf('XYZ')).toBe(2);
    expect(minorUnitsOf('')).toBe(2);
  });
});

describe('toMoney', () => {
  it('writes NGN "1500.5" as 1500.50, 150050 minor units', () => {
    expect(money('1500.5', 'NGN')).toEqual({
      amount: '1500.50',
      currency: 'NGN',
      minorUnits: 2,
      amountMinor: '150050',
    });
  });

  it('writes JPY 1500 without a point', () => {
    expect(money('1500', 'JPY')).toEqual({
      amount: '1500',
      currency: 'JPY',
      minorUnits: 0,
      amountMinor: '1500',
    });
    expect(money('1500.0', 'JPY')).toMatchObject({ amount: '1500', amountMinor: '1500' });
  });

  it('keeps KWD 10.125 with its three digits', () => {
    expect(money('10.125', 'KWD')).toEqual({
      amount: '10.125',
      currency: 'KWD',
      minorUnits: 3,
      amountMinor: '10125',
    });
  });

  it('keeps 0.1 + 0.2-style values exactly as sent', () => {
    expect(money('0.30000000000000004', 'NGN')).toMatchObject({
      amount: '0.30000000000000004',
      amountMinor: '30',
    });
    expect(money('0.3', 'NGN')).toMatchObject({ amount: '0.30', amountMinor: '30' });
  });

  it('keeps amounts beyond 2^53 exact', () => {
    expect(money('12345678901234567.89', 'NGN')).toMatchObject({
      amount: '12345678901234567.89',
      amountMinor: '1234567890123456789',
    });
  });

  it('keeps extra digits in amount and rounds amountMinor half away from zero', () => {
    expect(money('1500.505', 'NGN')).toMatchObject({ amount: '1500.505', amountMinor: '150051' });
    expect(money('1500.504', 'NGN')).toMatchObject({ amount: '1500.504', amountMinor: '150050' });
    expect(money('1.005', 'NGN')).toMatchObject({ amount: '1.005', amountMinor: '101' });
    expect(money('1500.5', 'JPY')).toMatchObject({ amount: '1500.5', amountMinor: '1501' });
  });

  it('rounds negative amounts half away from zero', () => {
    expect(money('-1500.505', 'NGN')).toMatchObject({
      amount: '-1500.505',
      amountMinor: '-150051',
    });
    expect(money('-1.5', 'NGN')).toMatchObject({ amount: '-1.50', amountMinor: '-150' });
    expect(money('-2.5', 'JPY')).toMatchObject({ amount: '-2.5', amountMinor: '-3' });
  });

  it('writes zero without a sign', () => {
    expect(money('-0', 'NGN')).toMatchObject({ amount: '0.00', amountMinor: '0' });
    expect(money('-0.004', 'NGN')).toMatchObject({ amount: '-0.004', amountMinor: '0' });
  });

  it('drops trailing zeros beyond the minor digits only', () => {
    expect(money('1500.500', 'NGN').amount).toBe('1500.50');
    expect(money('10.1250', 'KWD').amount).toBe('10.125');
    expect(money('007.5', 'NGN').amount).toBe('7.50');
  });

  it('states an unknown currency with 2 minor digits', () => {
    expect(money('7.5', 'XYZ')).toEqual({
      amount: '7.50',
      currency: 'XYZ',
      minorUnits: 2,
      amountMinor: '750',
    });
  });
});

describe('moneyOfExact (the …Money fields, from the amount a record keeps)', () => {
  it('writes the same Money from a number and from its text, and nothing for no amount', () => {
    const written = { amount: '1500.505', currency: 'NGN', minorUnits: 2, amountMinor: '150051' };
    expect(moneyOfExact(1500.505, 'NGN')).toEqual(written);
    expect(moneyOfExact('1500.505', 'NGN')).toEqual(written);
    expect(moneyOfExact(null, 'NGN')).toBeNull();
  });

  it('says unreadable, never guesses, without a currency or for a value altered in its store', () => {
    expect(moneyOfExact(10, null)).toBe(UNREADABLE);
    for (const altered of [
      {},
      [],
      true,
      'lots',
      Number.NaN,
      Number.POSITIVE_INFINITY,
      '1e-99999999',
    ]) {
      expect(moneyOfExact(altered as never, 'NGN')).toBe(UNREADABLE);
    }
  });
});

describe('toRoundedNumber (the Float fields)', () => {
  it('rounds 1.005 up on its decimal digits (Math.round would give 1)', () => {
    expect(rounded('1.005', 'NGN')).toBe(1.01);
  });

  it('rounds 2.675 to 2.68 (toFixed would give 2.67)', () => {
    expect(rounded('2.675', 'NGN')).toBe(2.68);
  });

  it('turns 0.30000000000000004 into 0.3', () => {
    expect(rounded(String(0.1 + 0.2), 'NGN')).toBe(0.3);
  });

  it('never rounds to a coarser unit than the currency has', () => {
    expect(rounded('10.125', 'KWD')).toBe(10.125);
    expect(rounded('10.1255', 'KWD')).toBe(10.126);
    expect(rounded('1500.5', 'JPY')).toBe(1501);
    expect(rounded('15000.5', 'NGN')).toBe(15000.5);
  });

  it('rounds negative amounts half away from zero', () => {
    expect(rounded('-1.005', 'NGN')).toBe(-1.01);
    expect(rounded('-2.675', 'NGN')).toBe(-2.68);
    expect(rounded('-19.99', 'NGN')).toBe(-19.99);
  });

  it('keeps a huge amount finite and unchanged', () => {
    expect(rounded('1e21', 'NGN')).toBe(1e21);
  });

  it('gives 0, not -0, for amounts that round to nothing', () => {
    expect(Object.is(rounded('-0.001', 'NGN'), 0)).toBe(true);
    expect(rounded('1e-7', 'NGN')).toBe(0);
  });

  it('rounds below half a minor unit down and half up', () => {
    expect(rounded('225.014', 'NGN')).toBe(225.01);
    expect(rounded('1.0049999', 'NGN')).toBe(1);
    expect(rounded('0.005', 'NGN')).toBe(0.01);
    expect(rounded('0.015', 'NGN')).toBe(0.02);
  });
});

describe('parseDecimal', () => {
  it('reads plain, signed, padded and exponent forms exactly', () => {
    expect(parseDecimal('1500.50')).toEqual({ unscaled: 150050n, scale: 2 });
    expect(parseDecimal(' -3 ')).toEqual({ unscaled: -3n, scale: 0 });
    expect(parseDecimal('1.5E3')).toEqual({ unscaled: 1500n, scale: 0 });
    expect(parseDecimal('25e-3')).toEqual({ unscaled: 25n, scale: 3 });
    expect(parseDecimal('1e+21')).toEqual({ unscaled: 10n ** 21n, scale: 0 });
  });

  it('refuses what is not a decimal number', () => {
    for (const text of ['', 'lots', '1,5', '.5', '5.', '--1', '+1', '1e', '0x10', 'NaN']) {
      expect(parseDecimal(text), JSON.stringify(text)).toBeUndefined();
    }
  });

  it('refuses amounts a double cannot hold and exponents without bound', () => {
    expect(parseDecimal('9'.repeat(400))).toBeUndefined();
    expect(parseDecimal('1e400')).toBeUndefined();
    expect(parseDecimal('1e-99999999')).toBeUndefined();
  });
});

describe('formatDecimal and roundToPlaces', () => {
  it('pads and trims to the digits asked', () => {
    expect(formatDecimal({ unscaled: 5n, scale: 3 }, 2)).toBe('0.005');
    expect(formatDecimal({ unscaled: 500n, scale: 3 }, 2)).toBe('0.50');
    expect(formatDecimal({ unscaled: -5n, scale: 0 }, 2)).toBe('-5.00');
  });

  it('rounds half away from zero on either side of zero', () => {
    expect(roundToPlaces({ unscaled: 125n, scale: 2 }, 1)).toBe(13n);
    expect(roundToPlaces({ unscaled: -125n, scale: 2 }, 1)).toBe(-13n);
    expect(roundToPlaces({ unscaled: 124n, scale: 2 }, 1)).toBe(12n);
    expect(roundToPlaces({ unscaled: 12n, scale: 0 }, 2)).toBe(1200n);
  });
});

/** A small deterministic generator (mulberry32), so that a failure names a reproducible case. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Doubles as JSON amounts come: 1 to 17 digits, 0 to 10 after the point, either sign; and odd ones. */
function amounts(count: number): number[] {
  const random = generator(20261127);
  const out = [0, -0, 1e-7, 5e-324, 1e15, -1e15, 999999999999999, 1e21, 2 ** 53, 0.1 + 0.2, 1.005];
  while (out.length < count) {
    const digits = 1 + Math.floor(random() * 17);
    let text = '';
    for (let i = 0; i < digits; i += 1) text += String(Math.floor(random() * 10));
    const places = Math.min(digits - 1, Math.floor(random() * 11));
    const written = places > 0 ? `${text.slice(0, -places)}.${text.slice(-places)}` : text;
    out.push((random() < 0.2 ? -1 : 1) * Number(written));
  }
  return out;
}

/** {@link formatDecimal} by BigInt arithmetic alone: the digits it must write. */
function formatByBigInt({ unscaled, scale }: Decimal, minDigits: number): string {
  const negative = unscaled < 0n;
  let magnitude = negative ? -unscaled : unscaled;
  let places = scale;
  while (places > minDigits && magnitude % 10n === 0n) {
    magnitude /= 10n;
    places -= 1;
  }
  if (places < minDigits) {
    magnitude *= 10n ** BigInt(minDigits - places);
    places = minDigits;
  }
  const text = magnitude.toString().padStart(places + 1, '0');
  const body = places === 0 ? text : `${text.slice(0, -places)}.${text.slice(-places)}`;
  return negative ? `-${body}` : body;
}

describe('amounts read from doubles, without writing them out', () => {
  const values = amounts(20_000);

  it('finds the decimal that the shortest text of every double names, with its scale', () => {
    for (const value of values) {
      expect(decimalOfDouble(value), String(value)).toEqual(parseDecimal(String(value)));
    }
    expect(decimalOfDouble(Number.NaN)).toBeUndefined();
    expect(decimalOfDouble(Number.POSITIVE_INFINITY)).toBeUndefined();
  });

  it('rounds and writes minor units as the exact decimal arithmetic does', () => {
    for (const value of values) {
      const amount = decimalOfDouble(value);
      if (amount === undefined) continue;
      for (const currency of ['JPY', 'NGN', 'KWD', 'CLF']) {
        const minorUnits = minorUnitsOf(currency);
        const minor = roundToPlaces(amount, minorUnits);
        // The nearest double to the rounded decimal, read from its text.
        const expected = Number(`${minor}e-${minorUnits}`);
        expect(toRoundedNumber(amount, minorUnits), `${value} ${currency}`).toBe(
          expected === 0 ? 0 : expected,
        );
        const written = toMoney(amount, currency);
        expect(written.amountMinor, `${value} ${currency}`).toBe(minor.toString());
        expect(written.amount, `${value} ${currency}`).toBe(formatByBigInt(amount, minorUnits));
      }
    }
  });
});
