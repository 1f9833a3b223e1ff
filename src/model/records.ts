/**
 * The domain records the gateway serves, as src/upstream/shapes.ts writes them from the
 * upstream JSON: times already instants, amounts already exact `Money`, the status already
 * mapped, the card already split. Plain JSON data, so the cache keeps them as they are; codegen
 * maps each schema type to one of these records. The form of a transaction reference is here
 * too. Nothing in src/model/ imports src/upstream/ (a test checks it): upstream/ reads into
 * these types.
 */
import type { TransactionStatus } from '../graphql/generated/resolvers-types.ts';
import type { Money } from './money.ts';

/** The form of a transaction reference: `NT-` followed by 1 to 64 letters and digits. */
export const TX_REF = /^NT-[A-Za-z0-9]{1,64}$/;

/** A value the upstream sent that the gateway cannot read with certainty. */
export interface Unreadable {
  unreadable: true;
}

export const UNREADABLE: Unreadable = { unreadable: true };

export function isUnreadable(value: unknown): value is Unreadable {
  return typeof value === 'object' && value !== null && 'unreadable' in value;
}

/** An upstream time as an ISO 8601 instant, `null` when absent. */
export type UpstreamTime = string | null | Unreadable;

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
