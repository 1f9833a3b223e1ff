/**
 * The peers' mapping of the upstream JSON to the records the schema serves, written the way a
 * team writes it in a resolver file: a few plain functions, no schema library, nothing from the
 * gateway (no file under bench/peers/ imports from src/).
 *
 * What it does, for every field the schema serves:
 * - checks that the answer has the fields it reads, with the JSON type it reads them as
 *   (`data` an object, `txStatus` and `currency` strings, amounts numbers or numeric strings, times and
 *   texts strings, `levels` an array, a level's `levelSlug` and a check's `name` strings), and
 *   throws `UpstreamAnswerError` naming the field otherwise;
 * - maps `txStatus` to the TransactionStatus enum (case and surrounding space ignored, anything
 *   else UNKNOWN) and keeps it as `rawStatus`;
 * - amounts: a number rounded to the currency's minor unit (Intl's digits for the code), and
 *   `Money` written as text from that number (`toFixed`), so an amount beyond a double's 15–17
 *   digits is not kept exactly;
 * - times: the payment form `Jan 5, 2024, 3:04:05 PM` and the KYC form `05-01-2024 15:04:05`
 *   read in UTC and written as ISO 8601; a time in another form is an error;
 * - card: six leading and four trailing digits, the masked number, the expiry's month and
 *   four-digit year.
 *
 * What it does not do (the gateway does; docs/performance.md weighs the difference): bound the
 * body's nesting and number length before parsing, accept a flag written as text or a level
 * number written as text, read times in a configured zone (DST gaps and repeated hours refused),
 * mark an unreadable time on its field only, keep amounts exact from the JSON text, refuse an
 * answer naming another record.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** The upstream answered something this mapping cannot read. */
export class UpstreamAnswerError extends Error {}

function fail(path: string, expected: string): never {
  throw new UpstreamAnswerError(`upstream answer: ${path} is not ${expected}`);
}

function object(value: Json | undefined, path: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'an object');
  return value;
}

function optionalObject(value: Json | undefined, path: string): JsonObject | null {
  return value === null || value === undefined ? null : object(value, path);
}

function string(value: Json | undefined, path: string): string {
  if (typeof value !== 'string') fail(path, 'a string');
  return value;
}

/** Text or nothing; a number (a phone, a card's digits) is written as text. */
function text(value: Json | undefined, path: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return String(value);
  return string(value, path);
}

function amount(value: Json | undefined, path: string): number | null {
  if (value === null || value === undefined) return null;
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) fail(path, 'a number');
  return number;
}

const STATUS: Record<string, string> = {
  SUCCESS: 'SUCCESSFUL',
  SUCCESSFUL: 'SUCCESSFUL',
  SUCCEEDED: 'SUCCESSFUL',
  FAILED: 'FAILED',
  FAILURE: 'FAILED',
  DECLINED: 'FAILED',
  PENDING: 'PENDING',
  PROCESSING: 'PENDING',
  INITIATED: 'PENDING',
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const PAYMENT_TIME =
  /^([A-Z][a-z]{2}) (\d{1,2}), (\d{4}), (\d{1,2}):(\d{2}):(\d{2})[ \u202f](AM|PM)$/;
const KYC_TIME = /^(\d{2})-(\d{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2})$/;

/** `Jan 5, 2024, 3:04:05 PM` read in UTC, as ISO 8601. */
function paymentTime(value: Json | undefined, path: string): string | null {
  if (value === null || value === undefined) return null;
  const m = PAYMENT_TIME.exec(string(value, path));
  const month = m ? MONTHS.indexOf(m[1] as string) : -1;
  if (m === null || month < 0) fail(path, 'a time');
  const hour = (Number(m[4]) % 12) + (m[7] === 'PM' ? 12 : 0);
  return new Date(
    Date.UTC(Number(m[3]), month, Number(m[2]), hour, Number(m[5]), Number(m[6])),
  ).toISOString();
}

/** `05-01-2024 15:04:05` (DD-MM-YYYY) read in UTC, as ISO 8601. */
function kycTime(value: Json | undefined, path: string): string | null {
  if (value === null || value === undefined) return null;
  const m = KYC_TIME.exec(string(value, path));
  if (m === null) fail(path, 'a time');
  const [, day, month, year, hour, minute, second] = m.map(Number) as number[];
  return new Date(
    Date.UTC(year as number, (month as number) - 1, day, hour, minute, second),
  ).toISOString();
}

const minorDigits = new Map<string, number>();

/** Digits after the point of a currency (Intl's table; 2 for a code Intl does not know). */
function minorUnitsOf(currency: string): number {
  let digits = minorDigits.get(currency);
  if (digits === undefined) {
    try {
      digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
        .maximumFractionDigits as number;
    } catch {
      digits = 2;
    }
    minorDigits.set(currency, digits);
  }
  return digits;
}

function money(value: number | null, currency: string, minorUnits: number) {
  if (value === null) return null;
  const scale = 10 ** minorUnits;
  const minor = Math.round(value * scale);
  return {
    amount: (minor / scale).toFixed(minorUnits),
    currency,
    minorUnits,
    amountMinor: String(minor),
  };
}

const digitsOf = (value: string | null): string => (value === null ? '' : value.replace(/\D/g, ''));

function card(value: JsonObject) {
  const first = digitsOf(text(value.first, 'data.card.first')).slice(0, 6) || null;
  const last = digitsOf(text(value.last, 'data.card.last')).slice(-4) || null;
  const expiry = text(value.expiry, 'data.card.expiry');
  const m = expiry === null ? null : /^(\d{1,2})\/(\d{2})$/.exec(expiry);
  const month = m ? Number(m[1]) : 0;
  return {
    first6: first,
    last4: last,
    masked: first === null || last === null ? null : `${first}******${last}`,
    expiry,
    expiryMonth: month >= 1 && month <= 12 ? month : null,
    expiryYear: m && month >= 1 && month <= 12 ? 2000 + Number(m[2]) : null,
    cardType: text(value.cardType, 'data.card.cardType'),
  };
}

/** A payment answer (parsed JSON) as the Transaction the schema serves. */
export function transactionOf(json: Json, txRef: string) {
  const answer = object(json, 'the body');
  const data = object(answer.data, 'data');
  const rawStatus = string(data.txStatus, 'data.txStatus');
  const currency = string(data.currency, 'data.currency').trim().toUpperCase();
  const minorUnits = minorUnitsOf(currency);
  const scale = 10 ** minorUnits;
  const amounts = [data.amount, data.appFee, data.merchantFee].map((value, i) => {
    const number = amount(value, `data.${['amount', 'appFee', 'merchantFee'][i]}`);
    return number === null ? null : Math.round(number * scale) / scale;
  });
  const customer = optionalObject(data.customer, 'data.customer');
  const cardJson = optionalObject(data.card, 'data.card');
  return {
    txRef,
    event: text(answer.event, 'event'),
    status: STATUS[rawStatus.trim().toUpperCase()] ?? 'UNKNOWN',
    rawStatus,
    succeeded: data.txIsSucces === true || data.txIsSucces === 'true',
    amount: amounts[0],
    appFee: amounts[1],
    merchantFee: amounts[2],
    amountMoney: money(amounts[0] ?? null, currency, minorUnits),
    appFeeMoney: money(amounts[1] ?? null, currency, minorUnits),
    merchantFeeMoney: money(amounts[2] ?? null, currency, minorUnits),
    currency,
    checkoutPoint: text(data.checkoutPoint, 'data.checkoutPoint'),
    paymentRef: text(data.paymentRef, 'data.paymentRef'),
    merchantRef: text(data.merchantRef, 'data.merchantRef'),
    paymentChannel: text(data.paymentChannel, 'data.paymentChannel'),
    deviceFingerprint: text(data.deviceFingerPrint, 'data.deviceFingerPrint'),
    message: text(data.message, 'data.message'),
    timestamp: paymentTime(data.txTimestamp, 'data.txTimestamp'),
    customer: customer && {
      fullName: text(customer.fullname, 'data.customer.fullname'),
      email: text(customer.email, 'data.customer.email'),
      phone: text(customer.phone, 'data.customer.phone'),
      joinedAt: paymentTime(customer.joinedAt, 'data.customer.joinedAt'),
    },
    card: cardJson && card(cardJson),
  };
}

/** A KYC answer (parsed JSON) as the KycUser the schema serves, `currentLevel` included. */
export function kycUserOf(json: Json, userRef: string) {
  const data = object(object(json, 'the body').data, 'data');
  if (!Array.isArray(data.levels)) fail('data.levels', 'an array');
  const levels = data.levels.map((levelJson, i) => {
    const path = `data.levels.${i}`;
    const level = object(levelJson, path);
    if (typeof level.level !== 'number') fail(`${path}.level`, 'a number');
    const checks = level.kyc === null || level.kyc === undefined ? [] : level.kyc;
    if (!Array.isArray(checks)) fail(`${path}.kyc`, 'an array');
    return {
      level: level.level,
      name: text(level.levelName, `${path}.levelName`),
      slug: string(level.levelSlug, `${path}.levelSlug`),
      verified: level.status === true,
      checks: checks.map((checkJson, j) => {
        const checkPath = `${path}.kyc.${j}`;
        const check = object(checkJson, checkPath);
        return {
          name: string(check.name, `${checkPath}.name`),
          passed: check.status === true,
          query: check.query ?? null,
          result: check.result ?? null,
          createdAt: kycTime(check.createdAt, `${checkPath}.createdAt`),
          updatedAt: kycTime(check.updatedAt, `${checkPath}.updatedAt`),
        };
      }),
    };
  });
  const level = typeof data.level === 'number' ? data.level : 0;
  return {
    userRef: text(data.userRef, 'data.userRef') ?? userRef,
    name: text(data.name, 'data.name'),
    verified: data.status === true,
    level,
    levels,
    currentLevel: levels.find((candidate) => candidate.level === level) ?? null,
  };
}
