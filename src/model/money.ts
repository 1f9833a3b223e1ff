/**
 * Exact amounts of money (the `Money` type). The payment service's amounts are read from the
 * JSON text itself and kept as decimal text; every computation of an amount below is on BigInt,
 * never on a binary float, so 0.1 + 0.2-style values and amounts beyond 2^53 come out as they
 * were sent (only the Float fields' doubles are made from them, each rounded once).
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
  readonly amount: string;
  readonly currency: string;
  readonly minorUnits: number;
  /** The amount in minor units, rounded half away from zero, as a whole number in text. */
  readonly amountMinor: string;
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

/** 10^0 … 10^40: the powers amounts use, made once (each power of a BigInt is a new object). */
const POWERS = Array.from({ length: 41 }, (_, exponent) => 10n ** BigInt(exponent));

function pow10(exponent: number): bigint {
  return POWERS[exponent] ?? 10n ** BigInt(exponent);
}

/** 10^0 … 10^22 as doubles: every one of them exact. */
const DOUBLE_POWERS = Array.from({ length: 23 }, (_, exponent) => 10 ** exponent);
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/** Whether a BigInt is a safe integer: `Number` gives it exactly. */
function isSafe(value: bigint): boolean {
  return value <= MAX_EXACT && value >= -MAX_EXACT;
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
 * Below this, a whole number of units of 10^-scale has at most 15 significant digits: two such
 * decimals never read as the same double (a double keeps 15 decimal digits), so the one found
 * for a double is the one its shortest text writes.
 */
const FIFTEEN_DIGITS = 1e15;
/** How many digits after the point {@link decimalOfDouble} tries before writing the number out. */
const FAST_PLACES = 8;

/**
 * The decimal a double stands for: the one `String(value)` writes (its shortest text), read by
 * {@link parseDecimal}; undefined for a non-finite double. A JSON amount of at most 15
 * significant digits (longer ones are read from their text, see upstream/shapes.ts) with up to
 * eight digits after the point is found by arithmetic, without writing the number out: the
 * smallest scale whose whole number of units reads back as the same double. That decimal has at
 * most 15 significant digits, so it is the only one that does, and the shortest text names the
 * same one with the same scale. Anything else is written out and parsed.
 */
export function decimalOfDouble(value: number): Decimal | undefined {
  if (!Number.isFinite(value)) return undefined;
  for (let scale = 0; scale <= FAST_PLACES; scale += 1) {
    const power = DOUBLE_POWERS[scale] as number;
    const whole = Math.round(value * power);
    if (whole >= FIFTEEN_DIGITS || whole <= -FIFTEEN_DIGITS) break;
    // Zero has no sign (`BigInt(-0)` is 0n, as `String(-0)` is "0").
    if (whole / power === value) return { unscaled: BigInt(whole), scale };
  }
  return parseDecimal(String(value));
}

/**
 * The decimal written out with at least `minDigits` digits after the point and no trailing
 * zero beyond them (`1500.5` with 2 → `1500.50`, `10.1250` with 3 → `10.125`, `1500.0` with 0
 * → `1500`). Zero has no sign.
 */
export function formatDecimal({ unscaled, scale }: Decimal, minDigits: number): string {
  // On the digits as text: one conversion, where dividing the BigInt by ten made a new one for
  // each zero dropped.
  const negative = unscaled < 0n;
  // A safe integer's digits from a double: the same text, without a negated BigInt.
  let digits = isSafe(unscaled)
    ? String(Math.abs(Number(unscaled)))
    : (negative ? -unscaled : unscaled).toString();
  let places = scale;
  if (places > minDigits) {
    let end = digits.length;
    while (places > minDigits && end > 0 && digits.charCodeAt(end - 1) === 0x30 /* 0 */) {
      end -= 1;
      places -= 1;
    }
    if (end === 0) {
      // Zero: no digit left to drop, and as few places as allowed.
      digits = '0';
      places = minDigits;
    } else digits = digits.slice(0, end);
  }
  if (places < minDigits) {
    digits = unscaled === 0n ? digits : digits + '0'.repeat(minDigits - places);
    places = minDigits;
  }
  const text = digits.padStart(places + 1, '0');
  const whole = text.slice(0, text.length - places);
  const body = places === 0 ? whole : `${whole}.${text.slice(text.length - places)}`;
  return negative ? `-${body}` : body;
}

/**
 * The decimal rounded to `places` digits after the point, half away from zero, as a whole
 * number of 10^-places (1500.505 to 2 places → 150051n).
 */
export function roundToPlaces({ unscaled, scale }: Decimal, places: number): bigint {
  if (scale === places) return unscaled;
  if (scale < places) return unscaled * pow10(places - scale);
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
    amountMinor: minorText(amount, minorUnits),
  };
}

/**
 * {@link roundToPlaces} as text. An amount with no more digits after the point than the currency
 * has, whose minor units are a safe integer (nearly every amount), is written from a double: the
 * same digits, without two BigInt operations per amount.
 */
function minorText(amount: Decimal, minorUnits: number): string {
  const { unscaled, scale } = amount;
  if (scale <= minorUnits && isSafe(unscaled)) {
    const power = DOUBLE_POWERS[minorUnits - scale];
    if (power !== undefined) {
      const minor = Number(unscaled) * power;
      // Exact: both factors are, and so is their product while it is a safe integer.
      if (Number.isSafeInteger(minor)) return minor === 0 ? '0' : String(minor);
    }
  }
  return roundToPlaces(amount, minorUnits).toString();
}

/**
 * The amount as a double, rounded to the currency's minor unit on its decimal digits (so 1.005
 * NGN is 1.01, where `Math.round(1.005 * 100) / 100` gives 1; KWD keeps 10.125).
 */
export function toRoundedNumber(amount: Decimal, minorUnits: number): number {
  const { unscaled, scale } = amount;
  const power = DOUBLE_POWERS[scale];
  if (scale <= minorUnits && power !== undefined && isSafe(unscaled)) {
    // Nothing to round, and both exact as doubles: their quotient is the double nearest to the
    // decimal (the one below, from the same rational), without a BigInt made on the way.
    const exact = Number(unscaled) / power;
    return exact === 0 ? 0 : exact;
  }
  const minor = roundToPlaces(amount, minorUnits);
  const minorPower = DOUBLE_POWERS[minorUnits];
  // Both exact as doubles: their quotient, rounded once as every IEEE division is, is the double
  // nearest to the rational, the one Number reads from its text below.
  const exact = minorPower !== undefined && isSafe(minor);
  // Otherwise the whole number of minor units with its exponent: the same rational as the
  // decimal written out, so Number reads the same double from it, without writing it out first.
  const rounded = exact ? Number(minor) / minorPower : Number(`${minor}e-${minorUnits}`);
  // -0 is a JSON 0, but keeps `Object.is` comparisons honest.
  return rounded === 0 ? 0 : rounded;
}
