/**
 * Exact amounts of money (the `Money` type). The payment service's amounts are read from the
 * JSON text itself and kept as decimal text; every computation below is on BigInt, never on a
 * binary float, so 0.1 + 0.2-style values and amounts beyond 2^53 come out as they were sent.
 */
import currencyCodes from 'currency-codes';

/** An exact decimal: the value is `unscaled / 10^scale`. */
export interface Decimal {
  unscaled: bigint;
  scale: number;
}

/** An amount in one currency, as the schema's `Money` type returns it (plain JSON data). */
export interface Money {
  /** The exact decimal, written with at least the currency's minor digits. */
  amount: string;
  currency: string;
  minorUnits: number;
  /** The amount in minor units, rounded half away from zero, as a whole number in text. */
  amountMinor: string;
}

/**
 * Bounds the work an exponent can ask for: `1e-99999999` would otherwise expand to a hundred
 * million digits. No amount of money is anywhere near these magnitudes.
 */
const MAX_EXPONENT = 400;

/** Minor digits of an ISO 4217 code that is not in the table. */
const DEFAULT_MINOR_UNITS = 2;

const MINOR_UNITS: ReadonlyMap<string, number> = new Map(
  currencyCodes.data.map((record) => [record.code, record.digits]),
);

/** Whether `code` (three capital letters) is a currency of the ISO 4217 table. */
export function isCurrencyCode(code: string): boolean {
  return MINOR_UNITS.has(code);
}

/** The ISO 4217 exponent of a currency code (2 for a code the table does not hold). */
export function minorUnitsOf(currency: string): number {
  return MINOR_UNITS.get(currency) ?? DEFAULT_MINOR_UNITS;
}

const TEN = 10n;

function pow10(exponent: number): bigint {
  return TEN ** BigInt(exponent);
}

/** Where the run of ASCII digits starting at `start` ends. */
function digitsEnd(text: string, start: number): number {
  let i = start;
  for (let c = text.charCodeAt(i); c >= 0x30 && c <= 0x39; c = text.charCodeAt(i)) i += 1;
  return i;
}

/**
 * The decimal written in `text` (`1500.50`, `-3`, `1.5e3`), or undefined when it is not a
 * decimal number, its exponent is out of bounds, or it is too large for a double (the Float
 * fields must stay finite). A decimal number is JSON's number grammar, with leading zeros and
 * surrounding space tolerated; it is read character by character (this runs for every amount
 * of every record).
 */
export function parseDecimal(text: string): Decimal | undefined {
  const core = text.trim();
  const negative = core.charCodeAt(0) === 0x2d; /* - */
  const wholeStart = negative ? 1 : 0;
  let end = digitsEnd(core, wholeStart);
  if (end === wholeStart) return undefined;
  const whole = core.slice(wholeStart, end);
  let fraction = '';
  if (core.charCodeAt(end) === 0x2e /* . */) {
    const fractionEnd = digitsEnd(core, end + 1);
    if (fractionEnd === end + 1) return undefined;
    fraction = core.slice(end + 1, fractionEnd);
    end = fractionEnd;
  }
  let exponent = 0;
  const e = core.charCodeAt(end);
  if (e === 0x65 /* e */ || e === 0x45 /* E */) {
    const sign = core.charCodeAt(end + 1);
    const digitsStart = sign === 0x2b /* + */ || sign === 0x2d /* - */ ? end + 2 : end + 1;
    const exponentEnd = digitsEnd(core, digitsStart);
    if (exponentEnd === digitsStart) return undefined;
    exponent = Number(core.slice(end + 1, exponentEnd));
    end = exponentEnd;
  }
  if (end !== core.length) return undefined;
  if (Math.abs(exponent) > MAX_EXPONENT) return undefined;
  // The same number as the decimal below, so the same double: infinite when it is too large.
  if (!Number.isFinite(Number(core))) return undefined;
  let unscaled = BigInt(whole + fraction);
  let scale = fraction.length - exponent;
  if (scale < 0) {
    unscaled *= pow10(-scale);
    scale = 0;
  }
  if (negative) unscaled = -unscaled;
  return { unscaled, scale };
}

/**
 * The decimal written out with at least `minDigits` digits after the point and no trailing
 * zero beyond them (`1500.5` with 2 → `1500.50`, `10.1250` with 3 → `10.125`, `1500.0` with 0
 * → `1500`). Zero has no sign.
 */
export function formatDecimal({ unscaled, scale }: Decimal, minDigits: number): string {
  let digits = unscaled;
  let places = scale;
  while (places > minDigits && digits % TEN === 0n) {
    digits /= TEN;
    places -= 1;
  }
  if (places < minDigits) {
    digits *= pow10(minDigits - places);
    places = minDigits;
  }
  const negative = digits < 0n;
  const text = (negative ? -digits : digits).toString().padStart(places + 1, '0');
  const whole = text.slice(0, text.length - places);
  const body = places === 0 ? whole : `${whole}.${text.slice(text.length - places)}`;
  return negative ? `-${body}` : body;
}

/**
 * The decimal rounded to `places` digits after the point, half away from zero, as a whole
 * number of 10^-places (1500.505 to 2 places → 150051n).
 */
export function roundToPlaces({ unscaled, scale }: Decimal, places: number): bigint {
  if (scale <= places) return unscaled * pow10(places - scale);
  const divisor = pow10(scale - places);
  const magnitude = unscaled < 0n ? -unscaled : unscaled;
  let quotient = magnitude / divisor;
  if ((magnitude % divisor) * 2n >= divisor) quotient += 1n;
  return unscaled < 0n ? -quotient : quotient;
}

/** The amount as `Money` in this currency (a code already trimmed and in capitals). */
export function toMoney(amount: Decimal, currency: string): Money {
  const minorUnits = minorUnitsOf(currency);
  return {
    amount: formatDecimal(amount, minorUnits),
    currency,
    minorUnits,
    amountMinor: roundToPlaces(amount, minorUnits).toString(),
  };
}

/**
 * The amount as a double, rounded to the currency's minor unit on its decimal digits (so 1.005
 * NGN is 1.01, where `Math.round(1.005 * 100) / 100` gives 1; KWD keeps 10.125).
 */
export function toRoundedNumber(amount: Decimal, minorUnits: number): number {
  // The whole number of minor units with its exponent: the same rational as the decimal written
  // out, so Number reads the same double from it, without writing the decimal out first.
  const rounded = Number(`${roundToPlaces(amount, minorUnits)}e-${minorUnits}`);
  // -0 is a JSON 0, but keeps `Object.is` comparisons honest.
  return rounded === 0 ? 0 : rounded;
}
