/**
 * The upstream JSON, described once and validated (spec §2). Everything below the resolvers
 * speaks these types; codegen maps each schema type to one of them.
 *
 * Leniency rules (contract §4): unknown extra fields are dropped, missing optional fields become
 * `null`, numbers sent as numeric strings are accepted, but a field of the wrong type rejects the
 * whole record. Card digits are cut to six leading and four trailing here, before anything is
 * cached, so a longer number never reaches the store.
 */
import { z } from 'zod';

const DECIMAL = /^\s*-?\d+(\.\d+)?\s*$/;

/** A decimal amount: a finite number, or a string holding one. */
const money = z
  .union([
    z.number().refine(Number.isFinite, 'is not a finite number'),
    z
      .string()
      .regex(DECIMAL, 'is not a number')
      .transform(Number)
      .refine(Number.isFinite, 'is out of range'),
  ])
  .nullish()
  .transform((v) => v ?? null);

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

const customerShape = z.object({
  fullname: text,
  email: strictText,
  phone: text,
  joinedAt: strictText,
});

const cardShape = z.object({
  first: text.transform((v) => digits(v, 'leading', 6)),
  last: text.transform((v) => digits(v, 'trailing', 4)),
  expiry: text,
  cardType: text,
});

const transactionDataShape = z.object({
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
  txTimestamp: strictText,
  customer: customerShape.nullish().transform((v) => v ?? null),
  card: cardShape.nullish().transform((v) => v ?? null),
});

/** The transaction status response of spec §2.1 (`{ event, data }`). */
export const transactionResponseShape = z.object({
  event: strictText,
  data: transactionDataShape,
});

export type UpstreamCustomer = z.output<typeof customerShape>;
export type UpstreamCard = z.output<typeof cardShape>;
/** One validated transaction record, with the reference it was asked by. */
export type UpstreamTransaction = z.output<typeof transactionDataShape> & {
  txRef: string;
  event: string | null;
};

const checkShape = z.object({
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
  createdAt: strictText,
  updatedAt: strictText,
});

const levelShape = z.object({
  level: wholeNumber,
  levelName: text,
  levelSlug: z.string(),
  status: flag.transform((v) => v ?? false),
  kyc: z
    .array(checkShape)
    .nullish()
    .transform((v) => v ?? []),
});

const kycDataShape = z.object({
  userRef: text,
  name: text,
  status: flag.transform((v) => v ?? false),
  level: wholeNumber.nullish().transform((v) => v ?? 0),
  levels: z.array(levelShape),
});

/** The KYC details response of spec §2.2 (`{ message, error, data }`), when `error` is false. */
export const kycResponseShape = z.object({
  message: strictText,
  error: flag,
  data: kycDataShape,
});

export type UpstreamKycCheck = z.output<typeof checkShape>;
export type UpstreamKycLevel = z.output<typeof levelShape>;
/** One validated KYC record, with the reference it was asked by. */
export type UpstreamKycUser = z.output<typeof kycDataShape> & { requestedUserRef: string };

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
