/**
 * The upstream JSON, described once, validated and normalized as it arrives. What
 * leaves this module is the record the resolvers serve: times already instants, amounts already
 * exact `Money`, the status already mapped, the card already split. It is plain JSON data, so
 * the cache (memory or Redis) keeps it as it is and a cache hit reads properties, nothing more.
 * Codegen maps each schema type to one of these records.
 *
 * Leniency rules: unknown extra fields are dropped, missing optional fields become
 * `null`, numbers sent as numeric strings are accepted, but a field of the wrong type rejects the
 * whole record. A time that cannot be read rejects nothing: it becomes an `Unreadable` marker,
 * which its field resolver turns into an error on that field only. Card digits are cut to six
 * leading and four trailing here, before anything is cached, so a longer number never reaches
 * the store.
 */
import { z } from 'zod';
import type { TransactionStatus } from '../graphql/generated/resolvers-types.ts';
import { parseExpiry } from '../model/card.ts';
import {
  type Decimal,
  type Money,
  minorUnitsOf,
  parseDecimal,
  toMoney,
  toRoundedNumber,
} from '../model/money.ts';
import { normalizeStatus } from '../model/status.ts';
import { parseUpstreamTime, type UpstreamTimeForm } from '../model/time.ts';

/** A value the upstream sent that the gateway cannot read with certainty. */
export interface Unreadable {
  unreadable: true;
}

const UNREADABLE: Unreadable = { unreadable: true };

export function isUnreadable(value: unknown): value is Unreadable {
  return typeof value === 'object' && value !== null && 'unreadable' in value;
}

/** An upstream time as an ISO 8601 instant, `null` when absent. */
export type UpstreamTime = string | null | Unreadable;

/**
 * The keys of the payment record whose JSON numbers are read as their source text (see
 * `moneySourceReviver`).
 */
const MONEY_KEYS: ReadonlySet<string> = new Set(['amount', 'appFee', 'merchantFee']);

/**
 * A `JSON.parse` reviver that hands the amounts of a payment record over as the text the
 * upstream wrote (`10.125`, `12345678901234567.89`), before a binary double can round them.
 * Other keys named like an amount (in objects the shape drops) become text too, harmlessly.
 */
export function moneySourceReviver(
  key: string,
  value: unknown,
  context?: { source?: string },
): unknown {
  if (typeof value !== 'number' || !MONEY_KEYS.has(key)) return value;
  // Every Node release that `engines` allows passes the source; without it, the shortest text
  // that reads back as the same double is the best there is.
  return context?.source ?? String(value);
}

/** A decimal amount: a finite number, or a string holding one; exact as text. */
const money = z
  .union([z.number().refine(Number.isFinite, 'is not a finite number'), z.string()])
  .nullish()
  .transform((value, ctx): Decimal | null => {
    if (value === null || value === undefined) return null;
    const decimal = parseDecimal(typeof value === 'number' ? String(value) : value);
    if (decimal === undefined) {
      ctx.addIssue({ code: 'custom', message: 'is not a number' });
      return z.NEVER;
    }
    return decimal;
  });

/** Text; identifiers such as a phone number may arrive as JSON numbers. */
const text = z
  .union([z.string(), z.number().transform(String)])
  .nullish()
  .transform((v) => v ?? null);

const strictText = z
  .string()
  .nullish()
  .transform((v) => v ?? null);

const flag = z
  .union([
    z.boolean(),
    z
      .enum(['true', 'false', 'TRUE', 'FALSE', 'True', 'False'])
      .transform((v) => v.toLowerCase() === 'true'),
  ])
  .nullish()
  .transform((v) => v ?? null);

const wholeNumber = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^\s*-?\d+\s*$/, 'is not a whole number')
    .transform(Number),
]);

function digits(value: string | null, keep: 'leading' | 'trailing', count: number): string | null {
  if (value === null) return null;
  const only = value.replace(/\D/g, '');
  if (only === '') return null;
  return keep === 'leading' ? only.slice(0, count) : only.slice(-count);
}

/** Upstream time text in `zone`, read once: an instant, `null`, or the marker. */
function time(form: UpstreamTimeForm, zone: string) {
  return strictText.transform((raw): UpstreamTime => {
    if (raw === null) return null;
    return parseUpstreamTime(raw, form, zone) ?? UNREADABLE;
  });
}

export interface UpstreamCustomer {
  fullName: string | null;
  email: string | null;
  phone: string | null;
  joinedAt: UpstreamTime;
}

export interface UpstreamCard {
  /** At most the six leading digits. */
  first6: string | null;
  /** At most the four trailing digits. */
  last4: string | null;
  expiry: string | null;
  expiryMonth: number | null;
  /** Four digits. */
  expiryYear: number | null;
  cardType: string | null;
  masked: string | null;
}

/** One transaction record, with the reference it was asked by. */
export interface UpstreamTransaction {
  txRef: string;
  event: string | null;
  status: TransactionStatus;
  /** `txStatus` verbatim. */
  rawStatus: string;
  succeeded: boolean;
  /** Rounded to the currency's minor unit. */
  amount: number | null;
  appFee: number | null;
  merchantFee: number | null;
  /** Unreadable when there is an amount but no currency to state it in. */
  amountMoney: Money | Unreadable | null;
  appFeeMoney: Money | Unreadable | null;
  merchantFeeMoney: Money | Unreadable | null;
  /** Trimmed, in capitals; `null` when missing (the `currency` field then fails). */
  currency: string | null;
  checkoutPoint: string | null;
  paymentRef: string | null;
  merchantRef: string | null;
  paymentChannel: string | null;
  deviceFingerprint: string | null;
  message: string | null;
  timestamp: UpstreamTime;
  customer: UpstreamCustomer | null;
  card: UpstreamCard | null;
}

export interface UpstreamKycCheck {
  name: string;
  passed: boolean;
  query: unknown;
  result: unknown;
  createdAt: UpstreamTime;
  updatedAt: UpstreamTime;
}

export interface UpstreamKycLevel {
  level: number;
  name: string | null;
  slug: string;
  verified: boolean;
  checks: UpstreamKycCheck[];
}

/** One KYC record; `userRef` is the reference asked by when the upstream leaves it out. */
export interface UpstreamKycUser {
  userRef: string;
  name: string | null;
  verified: boolean;
  level: number;
  levels: UpstreamKycLevel[];
}

/** An amount stated in the record's currency, or why it cannot be. */
function moneyOf(amount: Decimal | null, currency: string | null): Money | Unreadable | null {
  if (amount === null) return null;
  return currency === null ? UNREADABLE : toMoney(amount, currency);
}

function buildShapes(zone: string) {
  const paymentTime = time('payment', zone);
  const kycTime = time('kyc', zone);

  const customerShape = z
    .object({ fullname: text, email: strictText, phone: text, joinedAt: paymentTime })
    .transform(
      (c): UpstreamCustomer => ({
        fullName: c.fullname,
        email: c.email,
        phone: c.phone,
        joinedAt: c.joinedAt,
      }),
    );

  const cardShape = z
    .object({
      first: text.transform((v) => digits(v, 'leading', 6)),
      last: text.transform((v) => digits(v, 'trailing', 4)),
      expiry: text,
      cardType: text,
    })
    .transform((card): UpstreamCard => {
      const expiry = parseExpiry(card.expiry);
      return {
        first6: card.first,
        last4: card.last,
        expiry: card.expiry,
        expiryMonth: expiry?.month ?? null,
        expiryYear: expiry?.year ?? null,
        cardType: card.cardType,
        masked:
          card.first === null || card.last === null ? null : `${card.first}******${card.last}`,
      };
    });

  const transactionDataShape = z
    .object({
      amount: money,
      appFee: money,
      merchantFee: money,
      txIsSucces: flag,
      currency: strictText,
      checkoutPoint: strictText,
      paymentRef: text,
      merchantRef: text,
      paymentChannel: strictText,
      deviceFingerPrint: strictText,
      message: strictText,
      txStatus: z.string(),
      txTimestamp: paymentTime,
      customer: customerShape.nullish().transform((v) => v ?? null),
      card: cardShape.nullish().transform((v) => v ?? null),
    })
    .transform((d): Omit<UpstreamTransaction, 'txRef' | 'event'> => {
      const currency = d.currency?.trim().toUpperCase() || null;
      const minorUnits = minorUnitsOf(currency ?? '');
      const rounded = (amount: Decimal | null) =>
        amount === null ? null : toRoundedNumber(amount, minorUnits);
      return {
        status: normalizeStatus(d.txStatus),
        rawStatus: d.txStatus,
        // Missing means "not reported as successful": with money, the safe reading.
        succeeded: d.txIsSucces === true,
        amount: rounded(d.amount),
        appFee: rounded(d.appFee),
        merchantFee: rounded(d.merchantFee),
        amountMoney: moneyOf(d.amount, currency),
        appFeeMoney: moneyOf(d.appFee, currency),
        merchantFeeMoney: moneyOf(d.merchantFee, currency),
        currency,
        checkoutPoint: d.checkoutPoint,
        paymentRef: d.paymentRef,
        merchantRef: d.merchantRef,
        paymentChannel: d.paymentChannel,
        deviceFingerprint: d.deviceFingerPrint,
        message: d.message,
        timestamp: d.txTimestamp,
        customer: d.customer,
        card: d.card,
      };
    });

  /** The transaction status response (`{ event, data }`). */
  const transactionResponse = z.object({ event: strictText, data: transactionDataShape });

  const checkShape = z
    .object({
      name: z.string(),
      status: flag.transform((v) => v ?? false),
      query: z
        .unknown()
        .optional()
        .transform((v) => (v === undefined ? null : v)),
      result: z
        .unknown()
        .optional()
        .transform((v) => (v === undefined ? null : v)),
      createdAt: kycTime,
      updatedAt: kycTime,
    })
    .transform(
      (c): UpstreamKycCheck => ({
        name: c.name,
        passed: c.status,
        query: c.query,
        result: c.result,
        createdAt: c.createdAt,
        updatedAt: c.updatedAt,
      }),
    );

  const levelShape = z
    .object({
      level: wholeNumber,
      levelName: text,
      levelSlug: z.string(),
      status: flag.transform((v) => v ?? false),
      kyc: z
        .array(checkShape)
        .nullish()
        .transform((v) => v ?? []),
    })
    .transform(
      (l): UpstreamKycLevel => ({
        level: l.level,
        name: l.levelName,
        slug: l.levelSlug,
        verified: l.status,
        checks: l.kyc,
      }),
    );

  const kycDataShape = z
    .object({
      userRef: text,
      name: text,
      status: flag.transform((v) => v ?? false),
      level: wholeNumber.nullish().transform((v) => v ?? 0),
      levels: z.array(levelShape),
    })
    .transform((u) => ({
      userRef: u.userRef,
      name: u.name,
      verified: u.status,
      level: u.level,
      levels: u.levels,
    }));

  /** The KYC details response (`{ message, error, data }`), when `error` is false. */
  const kycResponse = z.object({ message: strictText, error: flag, data: kycDataShape });

  return { transactionResponse, kycResponse };
}

/** The response shapes that read upstream times in one zone. */
export type UpstreamShapes = ReturnType<typeof buildShapes>;

// The upstream JSON as the gateway accepts it: the shapes' input, read backwards. The sandbox
// writes its demo records in these types, so they cannot drift from what is validated here. The
// `…Json` names keep them apart from the normalized records above (`UpstreamTransaction`, …).

/** The payment interface's transaction status response (`{ event, data }`). */
export type TransactionResponseJson = z.input<UpstreamShapes['transactionResponse']>;

/** One transaction record as the payment interface writes it (`data` of the response). */
export type TransactionJson = TransactionResponseJson['data'];

/** The payer of a transaction record, as written. */
export type CustomerJson = NonNullable<TransactionJson['customer']>;

/** The KYC interface's details response (`{ message, error, data }`). */
export type KycResponseJson = z.input<UpstreamShapes['kycResponse']>;

/** One KYC user as the KYC interface writes it (`data` of the response). */
export type KycUserJson = KycResponseJson['data'];

/** A level of a KYC user, as written. */
export type KycLevelJson = KycUserJson['levels'][number];

/** A check of a KYC level, as written. */
export type KycCheckJson = NonNullable<KycLevelJson['kyc']>[number];

const shapesByZone = new Map<string, UpstreamShapes>();

/** The response shapes for upstream times read in `zone` (an IANA name), built once per zone. */
export function upstreamShapes(zone: string): UpstreamShapes {
  let shapes = shapesByZone.get(zone);
  if (!shapes) {
    shapes = buildShapes(zone);
    shapesByZone.set(zone, shapes);
  }
  return shapes;
}

/**
 * Describes the first problem zod found, by its field path only: the offending value is never
 * quoted, since it may be personal data.
 */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'the JSON has the wrong shape';
  const path = issue.path.length > 0 ? issue.path.join('.') : 'the body';
  const what =
    issue.code === 'invalid_type'
      ? `has the wrong type (expected ${issue.expected})`
      : issue.code === 'invalid_union'
        ? 'has the wrong type'
        : 'is invalid';
  return `${path} ${what}`;
}

/** Deepest nesting of arrays and objects accepted in an upstream body (contract §4). */
export const MAX_JSON_DEPTH = 64;
/** Longest number, in characters, accepted in an upstream body (contract §4). */
export const MAX_NUMBER_CHARS = 100;

/** What {@link scanJson} found in a body. */
export type JsonScan =
  | {
      ok: true /** A number with more than 15 significant digits may lose digits as a double. */;
      longDigits: boolean;
    }
  | { ok: false; reason: string };

/**
 * One linear pass over an upstream body before `JSON.parse`, refusing what would make parsing
 * or walking it costly: nesting deeper than {@link MAX_JSON_DEPTH} (a deep body overflows the
 * stack of recursive walks) and numbers longer than {@link MAX_NUMBER_CHARS} characters (a
 * 1.5 MB number kept the event loop busy for a second). About 1–2 ms per MB, no allocation.
 * Strings are skipped (with their escapes); the text is not otherwise validated — JSON.parse does.
 */
export function scanJson(text: string): JsonScan {
  let depth = 0;
  let run = 0;
  let longDigits = false;
  const length = text.length;
  for (let i = 0; i < length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      run = 0;
      for (i += 1; i < length; i += 1) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i += 1;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      run = 0;
      depth += 1;
      if (depth > MAX_JSON_DEPTH) return { ok: false, reason: 'the body is nested too deeply' };
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      run = 0;
      depth -= 1;
    } else if (
      (c >= 0x30 && c <= 0x39) ||
      c === 0x2e /* . */ ||
      c === 0x2d /* - */ ||
      c === 0x2b /* + */ ||
      c === 0x65 /* e */ ||
      c === 0x45 /* E */
    ) {
      run += 1;
      if (run > MAX_NUMBER_CHARS)
        return { ok: false, reason: 'the body holds an oversized number' };
      if (run >= 16) longDigits = true;
    } else {
      run = 0;
    }
  }
  return { ok: true, longDigits };
}
