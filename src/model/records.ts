/**
 * The domain records the gateway serves, as src/upstream/shapes.ts writes them from the
 * upstream JSON: times already instants, amounts already exact `Money`, the status already
 * mapped, the card already split. Plain JSON data, so the cache keeps them as they are; codegen
 * maps each schema type to one of these records. The form of a transaction reference is here
 * too. Nothing in src/model/ imports src/upstream/ (a test checks it): upstream/ reads into
 * these types.
 */
import type { TransactionStatus } from '../graphql/generated/resolvers-types.ts';
import { type Decimal, decimalOfDouble, type Money, parseDecimal, toMoney } from './money.ts';

/**
 * The form of the records below, part of every key they are stored under and of every record a
 * replica sends another: a replica of another version, during a rolling deploy, then reads the
 * record again instead of taking one in a form it does not know.
 */
export const RECORD_FORMAT = 'v4';

/** The form of a transaction reference: `NT-` followed by 1 to 64 letters and digits. */
export const TX_REF = /^NT-[A-Za-z0-9]{1,64}$/;

/** A value the upstream sent that the gateway cannot read with certainty. */
export interface Unreadable {
  readonly unreadable: true;
}

// Frozen: one object shared by every record that holds it.
export const UNREADABLE: Unreadable = Object.freeze({ unreadable: true });

export function isUnreadable(value: unknown): value is Unreadable {
  return typeof value === 'object' && value !== null && 'unreadable' in value;
}

/**
 * An amount exactly as the upstream wrote it, already read once as a decimal: a JSON number of at
 * most 15 significant digits (which a double keeps exactly), or text (the upstream's string, or a
 * longer number's own digits). Kept as it came rather than as `Money`: most queries ask for the
 * rounded amount alone, and `Money` is written out only for the fields that ask for it
 * ({@link moneyOfExact}).
 */
export type ExactAmount = number | string;

/** The decimal of an exact amount; undefined for one that does not read as a decimal. */
export function decimalOfExact(exact: ExactAmount): Decimal | undefined {
  return typeof exact === 'string' ? parseDecimal(exact) : decimalOfDouble(exact);
}

/**
 * An exact amount stated in the record's currency: `Money`, or unreadable when there is no
 * currency to state it in (or, in a record altered in its store, no decimal to read).
 */
export function moneyOfExact(
  exact: ExactAmount | null,
  currency: string | null,
): Money | Unreadable | null {
  if (exact === null) return null;
  const decimal = decimalOfExact(exact);
  return decimal === undefined || currency === null ? UNREADABLE : toMoney(decimal, currency);
}

/** An upstream time as an ISO 8601 instant, `null` when absent. */
export type UpstreamTime = string | null | Unreadable;

export interface UpstreamCustomer {
  readonly fullName: string | null;
  readonly email: string | null;
  readonly phone: string | null;
  readonly joinedAt: UpstreamTime;
}

export interface UpstreamCard {
  /** At most the six leading digits. */
  readonly first6: string | null;
  /** At most the four trailing digits. */
  readonly last4: string | null;
  readonly expiry: string | null;
  readonly expiryMonth: number | null;
  /** Four digits. */
  readonly expiryYear: number | null;
  readonly cardType: string | null;
  readonly masked: string | null;
}

/** One transaction record, with the reference it was asked by. */
export interface UpstreamTransaction {
  readonly txRef: string;
  readonly event: string | null;
  readonly status: TransactionStatus;
  /** `txStatus` verbatim. */
  readonly rawStatus: string;
  readonly succeeded: boolean;
  /** Rounded to the currency's minor unit. */
  readonly amount: number | null;
  readonly appFee: number | null;
  readonly merchantFee: number | null;
  /** The amounts exactly (the schema's `…Money` fields: {@link moneyOfExact}). */
  readonly amountExact: ExactAmount | null;
  readonly appFeeExact: ExactAmount | null;
  readonly merchantFeeExact: ExactAmount | null;
  /** Trimmed, in capitals; `null` when missing (the `currency` field then fails). */
  readonly currency: string | null;
  readonly checkoutPoint: string | null;
  readonly paymentRef: string | null;
  readonly merchantRef: string | null;
  readonly paymentChannel: string | null;
  readonly deviceFingerprint: string | null;
  readonly message: string | null;
  readonly timestamp: UpstreamTime;
  readonly customer: UpstreamCustomer | null;
  readonly card: UpstreamCard | null;
}

export interface UpstreamKycCheck {
  readonly name: string;
  readonly passed: boolean;
  readonly query: unknown;
  readonly result: unknown;
  readonly createdAt: UpstreamTime;
  readonly updatedAt: UpstreamTime;
}

export interface UpstreamKycLevel {
  readonly level: number;
  readonly name: string | null;
  readonly slug: string;
  readonly verified: boolean;
  readonly checks: ReadonlyArray<UpstreamKycCheck>;
}

/** One KYC record; `userRef` is the reference asked by when the upstream leaves it out. */
export interface UpstreamKycUser {
  readonly userRef: string;
  readonly name: string | null;
  readonly verified: boolean;
  readonly level: number;
  readonly levels: ReadonlyArray<UpstreamKycLevel>;
}
