/**
 * Demo data of the sandbox, in the provider's own JSON shapes (typed as the input of the
 * gateway's shapes, src/upstream/shapes.ts), plus the tables that document every demo and failure
 * reference. Nothing here keeps state: each function returns a fresh object so
 * that a caller may mutate it without touching another sandbox instance.
 */
import { createHash } from 'node:crypto';
import type {
  CustomerJson,
  KycCheckJson,
  KycLevelJson,
  KycUserJson,
  TransactionResponseJson,
} from '../src/upstream/shapes.ts';

/** Any JSON value. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** One line of the sandbox's documentation of a reference or user. */
export type ReferenceDoc = {
  readonly ref: string;
  readonly description: string;
};

const MONTHS = [
  'Jan',
  'Feb',
  'Mar',
  'Apr',
  'May',
  'Jun',
  'Jul',
  'Aug',
  'Sep',
  'Oct',
  'Nov',
  'Dec',
] as const;

// Intl (en-US) writes U+202F before AM/PM; the contract asks the gateway to accept
// both that and a plain space, so one demo record uses it.
const NARROW_NO_BREAK_SPACE = '\u202f';

const pad2 = (n: number): string => String(n).padStart(2, '0');

/**
 * Formats an instant the way the payment interface writes `txTimestamp` and
 * `joinedAt`, read in UTC: `Jan 5, 2024, 3:04:05 PM`.
 */
export function formatPaymentTime(
  epochMs: number,
  options: { narrowSpace?: boolean } = {},
): string {
  const d = new Date(epochMs);
  const hours24 = d.getUTCHours();
  const hours12 = hours24 % 12 === 0 ? 12 : hours24 % 12;
  const meridiem = hours24 < 12 ? 'AM' : 'PM';
  const space = options.narrowSpace === true ? NARROW_NO_BREAK_SPACE : ' ';
  const month = MONTHS[d.getUTCMonth()] ?? 'Jan';
  return `${month} ${d.getUTCDate()}, ${d.getUTCFullYear()}, ${hours12}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}${space}${meridiem}`;
}

/**
 * Formats an instant the way the KYC interface writes `createdAt` and
 * `updatedAt`, read in UTC: `05-01-2024 15:04:05` (DD-MM-YYYY).
 */
export function formatKycTime(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad2(d.getUTCDate())}-${pad2(d.getUTCMonth() + 1)}-${d.getUTCFullYear()} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
}

const utc = (iso: string): number => Date.parse(iso);

// ---------------------------------------------------------------------------
// Payment interface
// ---------------------------------------------------------------------------

const SUCCESS_CUSTOMER: CustomerJson = {
  fullname: 'Adaeze Okafor',
  email: 'adaeze.okafor@example.com',
  phone: '2348012345678',
  joinedAt: formatPaymentTime(utc('2023-03-14T09:26:53Z')),
};

function successRecord(): TransactionResponseJson {
  return {
    event: 'PAYMENT_SUCCESSFUL',
    data: {
      amount: 15000.5,
      appFee: 225.01,
      merchantFee: 75.25,
      txIsSucces: true,
      currency: 'NGN',
      checkoutPoint: 'https://shop.example.com/checkout/cart-1001',
      paymentRef: 'PAY-SUCCESS001',
      merchantRef: 'ORDER-1001',
      paymentChannel: 'Card',
      deviceFingerPrint: '9f86d081884c7d659a2feaa0c55ad015',
      message: 'Approved by financial institution',
      txStatus: 'SUCCESSFUL',
      txTimestamp: formatPaymentTime(utc('2024-01-05T15:04:05Z')),
      customer: { ...SUCCESS_CUSTOMER },
      card: { first: '411111', last: '1111', expiry: '12/27', cardType: 'Visa' },
    },
  };
}

function failedRecord(): TransactionResponseJson {
  return {
    event: 'PAYMENT_FAILED',
    data: {
      amount: 1234.56,
      appFee: 18.52,
      merchantFee: 6.17,
      txIsSucces: false,
      currency: 'NGN',
      checkoutPoint: 'https://shop.example.com/checkout/cart-1002',
      paymentRef: 'PAY-FAILED001',
      merchantRef: 'ORDER-1002',
      paymentChannel: 'Card',
      deviceFingerPrint: 'b5bb9d8014a0f9b1d61e21e796d78dcc',
      message: 'Insufficient funds',
      txStatus: 'FAILED',
      // Leap day, last second before midnight: catches 12-hour and date arithmetic slips.
      txTimestamp: formatPaymentTime(utc('2024-02-29T23:59:59Z')),
      customer: {
        fullname: 'Emeka Nwosu',
        email: 'emeka.nwosu@example.com',
        phone: '2348098765432',
        joinedAt: formatPaymentTime(utc('2022-11-30T18:45:00Z')),
      },
      card: { first: '506099', last: '7890', expiry: '03/26', cardType: 'Verve' },
    },
  };
}

function pendingRecord(settled: boolean): TransactionResponseJson {
  return {
    event: settled ? 'PAYMENT_SUCCESSFUL' : 'PAYMENT_PENDING',
    data: {
      amount: 5000,
      appFee: 75,
      merchantFee: 25,
      txIsSucces: settled,
      currency: 'NGN',
      checkoutPoint: 'https://shop.example.com/checkout/cart-1003',
      paymentRef: 'PAY-PENDING001',
      merchantRef: 'ORDER-1003',
      paymentChannel: 'Card',
      deviceFingerPrint: '7d865e959b2466918c9863afca942d0f',
      message: settled
        ? 'Approved by financial institution'
        : 'Awaiting confirmation from the issuer',
      txStatus: settled ? 'SUCCESSFUL' : 'PENDING',
      // Noon: 12 PM is 12:00, not 00:00.
      txTimestamp: formatPaymentTime(utc('2024-06-01T12:00:00Z')),
      customer: {
        fullname: 'Tunde Bakare',
        email: 'tunde.bakare@example.com',
        phone: '2347031234567',
        joinedAt: formatPaymentTime(utc('2024-05-30T07:08:09Z')),
      },
      card: { first: '539983', last: '4242', expiry: '08/28', cardType: 'Mastercard' },
    },
  };
}

function noCardRecord(): JsonObject {
  return {
    event: 'PAYMENT_SUCCESSFUL',
    data: {
      amount: 72000,
      appFee: 100,
      merchantFee: 50.5,
      txIsSucces: true,
      currency: 'NGN',
      checkoutPoint: 'https://shop.example.com/checkout/cart-1004',
      paymentRef: 'PAY-NOCARD001',
      merchantRef: 'ORDER-1004',
      paymentChannel: 'BankTransfer',
      deviceFingerPrint: '3f79bb7b435b05321651daefd374cdc6',
      message: 'Transfer received',
      txStatus: 'SUCCESSFUL',
      // Half past midnight: 12 AM is 00:xx.
      txTimestamp: formatPaymentTime(utc('2023-12-31T00:30:00Z')),
    },
  };
}

function oddStatusRecord(): TransactionResponseJson {
  const record = successRecord();
  return {
    event: 'PAYMENT_REVERSED',
    data: {
      ...record.data,
      amount: 800.75,
      appFee: 12.01,
      merchantFee: 4,
      txIsSucces: false,
      paymentRef: 'PAY-ODDSTATUS001',
      merchantRef: 'ORDER-1005',
      checkoutPoint: 'https://shop.example.com/checkout/cart-1005',
      message: 'Payment reversed by the issuer',
      txStatus: 'REVERSED',
      txTimestamp: formatPaymentTime(utc('2024-07-04T08:15:30Z')),
    },
  };
}

function stringsRecord(): JsonObject {
  return {
    event: 'PAYMENT_SUCCESSFUL',
    requestId: 'req_7c1f0e',
    data: {
      amount: '2500.00',
      appFee: '37.50',
      merchantFee: '12.49',
      txIsSucces: true,
      currency: 'NGN',
      checkoutPoint: 'https://shop.example.com/checkout/cart-1006',
      paymentRef: 'PAY-STRINGS001',
      merchantRef: 'ORDER-1006',
      paymentChannel: 'Card',
      deviceFingerPrint: 'c3ab8ff13720e8ad9047dd39466b3c89',
      message: 'Approved by financial institution',
      txStatus: 'SUCCESSFUL',
      txTimestamp: formatPaymentTime(utc('2024-10-10T10:10:10Z')),
      customer: {
        fullname: 'Ngozi Eze',
        email: 'ngozi.eze@example.com',
        phone: '2348023456789',
        joinedAt: formatPaymentTime(utc('2021-01-01T00:00:00Z')),
        tier: 'gold',
      },
      card: {
        first: '411111',
        last: '0004',
        expiry: '01/30',
        cardType: 'Visa',
        issuer: 'Demo Bank',
        isInternational: false,
      },
      settlementBatch: 42,
      metadata: { cartItems: 3, coupon: null },
    },
  };
}

function usdRecord(): TransactionResponseJson {
  return {
    event: 'PAYMENT_SUCCESSFUL',
    data: {
      amount: 19.99,
      appFee: 0.3,
      merchantFee: 0.1,
      txIsSucces: true,
      currency: 'USD',
      checkoutPoint: 'https://store.example.com/checkout/usd-2001',
      paymentRef: 'PAY-USD001',
      merchantRef: 'ORDER-2001',
      paymentChannel: 'Card',
      deviceFingerPrint: '2c26b46b68ffc68ff99b453c1d304134',
      message: 'Approved by financial institution',
      txStatus: 'SUCCESSFUL',
      txTimestamp: formatPaymentTime(utc('2024-11-03T13:02:03Z'), { narrowSpace: true }),
      customer: {
        fullname: 'Jane Doe',
        email: 'jane.doe@example.com',
        phone: '14155550123',
        joinedAt: formatPaymentTime(utc('2024-11-02T23:00:00Z'), { narrowSpace: true }),
      },
      card: { first: '555555', last: '4444', expiry: '09/29', cardType: 'Mastercard' },
    },
  };
}

const FIXED_TRANSACTIONS: Readonly<Record<string, () => JsonObject | TransactionResponseJson>> = {
  'NT-SUCCESS001': successRecord,
  'NT-FAILED001': failedRecord,
  'NT-NOCARD001': noCardRecord,
  'NT-ODDSTATUS001': oddStatusRecord,
  'NT-STRINGS001': stringsRecord,
  'NT-USD001': usdRecord,
};

/** The txRef grammar of the path: `NT-` and then letters or digits. */
export const TX_REF_PATTERN = /^NT-[A-Za-z0-9]+$/;

/** Prefix of references that are PENDING for a while, then SUCCESSFUL. */
export const PENDING_PREFIX = 'NT-PENDING';

/** Prefix of references answered with a synthetic record (load tests). */
export const GENERATED_PREFIX = 'NT-GEN';

/**
 * The fixed demo record of a reference, or `undefined` when the reference is
 * not one of the fixed demo references (pending, generated and failure
 * references are handled by the payment handler).
 */
export function fixedTransaction(txRef: string): JsonObject | TransactionResponseJson | undefined {
  return Object.hasOwn(FIXED_TRANSACTIONS, txRef) ? FIXED_TRANSACTIONS[txRef]?.() : undefined;
}

/**
 * The record of a `NT-PENDING…` reference: NT-PENDING001's data, PENDING
 * until `settled`, SUCCESSFUL after.
 */
export function pendingTransaction(txRef: string, settled: boolean): TransactionResponseJson {
  const record = pendingRecord(settled);
  record.data.paymentRef = paymentRefFor(txRef);
  return record;
}

/**
 * A good SUCCESSFUL record for a reference that is not a demo one (slow,
 * flaky and rate-limited references answer this once they answer well).
 */
export function goodTransaction(txRef: string): TransactionResponseJson {
  const record = successRecord();
  record.data.paymentRef = paymentRefFor(txRef);
  return record;
}

const GENERATED_NAMES = [
  'Chinedu Obi',
  'Funmilayo Adeyemi',
  'Ibrahim Musa',
  'Kemi Adebayo',
  'Oluwaseun Ajayi',
  'Zainab Bello',
  'Uche Nnamdi',
  'Halima Yusuf',
] as const;

const GENERATED_CARDS = [
  { first: '411111', cardType: 'Visa' },
  { first: '555555', cardType: 'Mastercard' },
  { first: '506099', cardType: 'Verve' },
] as const;

const GENERATED_EPOCH = utc('2024-01-01T00:00:00Z');
const SECONDS_PER_YEAR = 365 * 24 * 3600;

/**
 * A deterministic SUCCESSFUL record for a `NT-GEN…` reference: the same
 * reference always gives the same record, different references give
 * different amounts, times and cards.
 */
export function generatedTransaction(txRef: string): TransactionResponseJson {
  const digest = createHash('sha256').update(txRef).digest();
  // Whole cents keep amount and fees exact to the cent once divided by 100.
  const cents = 100 + (digest.readUInt32BE(0) % 99_990_000);
  const timestamp = GENERATED_EPOCH + (digest.readUInt32BE(4) % SECONDS_PER_YEAR) * 1000;
  const name = GENERATED_NAMES[(digest[8] ?? 0) % GENERATED_NAMES.length] ?? GENERATED_NAMES[0];
  const card = GENERATED_CARDS[(digest[9] ?? 0) % GENERATED_CARDS.length] ?? GENERATED_CARDS[0];
  const last4 = String(digest.readUInt16BE(10) % 10_000).padStart(4, '0');
  const expiryMonth = ((digest[12] ?? 0) % 12) + 1;
  const expiryYear = 26 + ((digest[13] ?? 0) % 6);
  const suffix = txRef.slice(3);
  const handle = name.toLowerCase().replace(/[^a-z]+/g, '.');
  return {
    event: 'PAYMENT_SUCCESSFUL',
    data: {
      amount: cents / 100,
      appFee: Math.round(cents * 0.015) / 100,
      merchantFee: Math.round(cents * 0.005) / 100,
      txIsSucces: true,
      currency: 'NGN',
      checkoutPoint: `https://shop.example.com/checkout/${suffix.toLowerCase()}`,
      paymentRef: paymentRefFor(txRef),
      merchantRef: `ORDER-${suffix}`,
      paymentChannel: 'Card',
      deviceFingerPrint: digest.subarray(16, 32).toString('hex'),
      message: 'Approved by financial institution',
      txStatus: 'SUCCESSFUL',
      txTimestamp: formatPaymentTime(timestamp),
      customer: {
        fullname: name,
        email: `${handle}@example.com`,
        phone: `23480${String(digest.readUInt32BE(14) % 100_000_000).padStart(8, '0')}`,
        joinedAt: formatPaymentTime(timestamp - ((digest[15] ?? 0) + 1) * 86_400_000),
      },
      card: {
        first: card.first,
        last: last4,
        expiry: `${pad2(expiryMonth)}/${expiryYear}`,
        cardType: card.cardType,
      },
    },
  };
}

function paymentRefFor(txRef: string): string {
  return `PAY-${txRef.slice(3)}`;
}

// ---------------------------------------------------------------------------
// Several businesses
// ---------------------------------------------------------------------------

/**
 * Whose demo data a record is. The first business (`index` 0) answers the documented data
 * above; every other one answers the same references with its own customers, amounts and
 * order references, so that the same txRef or userRef tells which business answered.
 */
export type DemoBusiness = { readonly index: number; readonly id: string };

/** The business of a sandbox that serves one: the documented data. */
export const FIRST_BUSINESS: DemoBusiness = { index: 0, id: 'default' };

// Names no record of the first business uses, so a record of another business never reads as
// one of the first's.
const OTHER_CUSTOMERS = [
  'Kwame Mensah',
  'Amara Nwachukwu',
  'Sani Abubakar',
  'Yetunde Olaniyan',
  'Efe Okoro',
  'Nneka Umeh',
  'Dapo Oyebanji',
  'Hauwa Lawal',
] as const;

// Each business after the first adds this much to every amount (in cents): NGN 1000 for the
// second business, 2000 for the third, and so on.
const AMOUNT_STEP_CENTS = 100_000;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function digestOf(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** A money value moved by `cents`, written as it was (a number, or a string with two decimals). */
function shiftMoney(value: unknown, cents: number): unknown {
  if (typeof value === 'number') {
    return Math.round(value * 100 + cents) / 100;
  }
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) {
    return ((Math.round(Number(value) * 100) + cents) / 100).toFixed(2);
  }
  return value;
}

/**
 * The record of `txRef` as `business` answers it. The first business's is `record` itself;
 * another business's has a customer of its own (name, e-mail, phone), an amount larger by NGN
 * 1000 per business after the first, and its id at the end of `merchantRef`. Status, fees,
 * card and times stay, so a failure or status test reads the same under every business.
 * Deterministic: the same business and txRef always give the same record.
 */
export function businessTransaction<T extends JsonObject | TransactionResponseJson>(
  record: T,
  txRef: string,
  business: DemoBusiness,
): T {
  const data: unknown = record.data;
  if (business.index === 0 || !isObject(data)) {
    return record;
  }
  data.amount = shiftMoney(data.amount, business.index * AMOUNT_STEP_CENTS);
  if (typeof data.merchantRef === 'string') {
    data.merchantRef = `${data.merchantRef}-${business.id.toUpperCase()}`;
  }
  const customer = data.customer;
  if (isObject(customer)) {
    const digest = digestOf(`${business.id}:${txRef}`);
    // business.index - 1 first: the businesses after the first get distinct names for one txRef.
    const name =
      OTHER_CUSTOMERS[(business.index - 1 + (digest[0] ?? 0)) % OTHER_CUSTOMERS.length] ??
      OTHER_CUSTOMERS[0];
    customer.fullname = name;
    customer.email = `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@example.com`;
    if (customer.phone !== undefined) {
      customer.phone = `23470${String(digest.readUInt32BE(1) % 100_000_000).padStart(8, '0')}`;
    }
  }
  return record;
}

/** Demo transaction references, for the banner and the README. */
export const PAYMENT_DEMO_REFERENCES: readonly ReferenceDoc[] = [
  {
    ref: 'NT-SUCCESS001',
    description: 'SUCCESSFUL card payment, NGN 15000.5, fees 225.01 / 75.25, customer and card',
  },
  {
    ref: 'NT-FAILED001',
    description: 'FAILED card payment (Insufficient funds), leap-day 11:59:59 PM timestamp',
  },
  {
    ref: 'NT-PENDING001',
    description:
      'PENDING NGN 5000 (merchantRef ORDER-1003), turns SUCCESSFUL some seconds after its first request (any NT-PENDING… ref, own clock each)',
  },
  {
    ref: 'NT-NOCARD001',
    description: 'SUCCESSFUL BankTransfer, no customer and no card keys, 12:30 AM timestamp',
  },
  {
    ref: 'NT-ODDSTATUS001',
    description: 'txStatus REVERSED (unknown to the gateway), event PAYMENT_REVERSED',
  },
  {
    ref: 'NT-STRINGS001',
    description: 'SUCCESSFUL, amount and fees as numeric strings ("2500.00"), extra unknown fields',
  },
  {
    ref: 'NT-USD001',
    description:
      'SUCCESSFUL USD 19.99 Mastercard; times use a narrow no-break space before PM, as Intl writes',
  },
  {
    ref: 'NT-GEN<anything>',
    description:
      'deterministic synthetic SUCCESSFUL record derived from the ref (load tests), e.g. NT-GEN42',
  },
];

/** Failure transaction references, for the banner and the README. */
export const PAYMENT_FAILURE_REFERENCES: readonly ReferenceDoc[] = [
  {
    ref: 'NT-UNKNOWN1 (any other)',
    description: '404 {"message":"Transaction not found","error":true}',
  },
  { ref: 'NT-SLOW001', description: 'good record, after the slow delay (default 10 s)' },
  { ref: 'NT-ERROR500', description: '500 with a JSON error body' },
  { ref: 'NT-ERROR502', description: '502 with an HTML body' },
  { ref: 'NT-ERROR503', description: '503, always' },
  {
    ref: 'NT-FLAKY<anything>',
    description: '503 on the first request for that ref, then the good record',
  },
  { ref: 'NT-RATELIMIT001', description: '429 with Retry-After: 30' },
  { ref: 'NT-RATELIMIT002', description: '429 without Retry-After' },
  {
    ref: 'NT-RATELIMIT003',
    description: '429 with Retry-After: 1 the first time, then the good record',
  },
  { ref: 'NT-NOTJSON001', description: '200 with a text/html body' },
  {
    ref: 'NT-BADSHAPE001',
    description: '200 JSON of the wrong shape ({"data":{"amount":"lots","txStatus":7}})',
  },
  { ref: 'NT-NODATA001', description: '200 {"event":"X"}, no data' },
  { ref: 'NT-RESET001', description: 'connection reset, no answer' },
  { ref: 'NT-UNAUTH001', description: '401 even with the right token' },
  { ref: 'NT-FORBID001', description: '403' },
  {
    ref: 'NT-ECHO001',
    description: '500 whose body echoes the request headers, Authorization included (leak test)',
  },
];

// ---------------------------------------------------------------------------
// KYC interface
// ---------------------------------------------------------------------------

/** The levels every sandbox user has, in order. */
export const KYC_LEVELS: readonly {
  readonly level: number;
  readonly levelName: string;
  readonly levelSlug: string;
}[] = [
  { level: 1, levelName: 'Basic', levelSlug: 'tier_1' },
  { level: 2, levelName: 'Intermediate', levelSlug: 'tier_2' },
  { level: 3, levelName: 'Advanced', levelSlug: 'tier_3' },
];

function check(
  name: string,
  status: boolean,
  query: JsonObject,
  result: JsonObject,
  createdIso: string,
  updatedIso = createdIso,
): KycCheckJson {
  return {
    name,
    status,
    query,
    result,
    createdAt: formatKycTime(utc(createdIso)),
    updatedAt: formatKycTime(utc(updatedIso)),
  };
}

/** The levels of a user, none verified, no checks: the shape of a new user. */
export function emptyKycLevels(): KycLevelJson[] {
  return KYC_LEVELS.map((l) => ({ ...l, status: false, kyc: [] }));
}

function level(n: number, status: boolean, kyc: KycCheckJson[]): KycLevelJson {
  const def = KYC_LEVELS[n - 1];
  if (def === undefined) {
    throw new RangeError(`No KYC level ${n}`);
  }
  return { ...def, status, kyc };
}

function demoNew(): KycUserJson {
  return {
    userRef: 'usr_demo_new',
    name: 'Bola Ahmed',
    status: false,
    level: 0,
    levels: emptyKycLevels(),
  };
}

function demoTier1(): KycUserJson {
  return {
    userRef: 'usr_demo_tier1',
    name: 'Amaka Chukwu',
    status: false,
    level: 1,
    levels: [
      level(1, true, [
        check('gender', true, { gender: 'female' }, {}, '2024-01-05T15:04:05Z'),
        check(
          'name',
          true,
          { firstName: 'Amaka', lastName: 'Chukwu' },
          { match: true },
          '2024-01-05T15:04:09Z',
          '2024-01-05T15:05:00Z',
        ),
      ]),
      level(2, false, []),
      level(3, false, []),
    ],
  };
}

function demoTier3(): KycUserJson {
  return {
    userRef: 'usr_demo_tier3',
    // Non-ASCII on purpose: the name must survive UTF-8 end to end.
    name: 'Oluwadámilọ́lá Ògúnṣẹ̀yẹ',
    status: true,
    level: 3,
    levels: [
      level(1, true, [
        check('gender', true, { gender: 'male' }, {}, '2023-06-01T08:00:00Z'),
        check(
          'name',
          true,
          { firstName: 'Oluwadámilọ́lá', lastName: 'Ògúnṣẹ̀yẹ' },
          { match: true },
          '2023-06-01T08:00:10Z',
        ),
        check(
          'phone',
          true,
          { phone: '2348031112222' },
          { verified: true, carrier: 'MTN' },
          '2023-06-01T08:01:00Z',
          '2023-06-01T08:03:30Z',
        ),
      ]),
      level(2, true, [
        check('bvn', true, { bvn: '22200000001' }, { match: true }, '2023-06-02T10:15:00Z'),
        check(
          'nin',
          true,
          { nin: '10000000001' },
          { match: true, confidence: 0.97 },
          '2023-06-02T10:16:00Z',
        ),
        check('dob', true, { dateOfBirth: '1990-04-12' }, { match: true }, '2023-06-02T10:17:00Z'),
      ]),
      level(3, true, [
        check(
          'address',
          true,
          { street: '12 Marina Road', city: 'Lagos', country: 'NG' },
          { verified: true, method: 'utility_bill' },
          '2023-07-20T16:45:00Z',
        ),
        check(
          'selfie',
          true,
          { imageRef: 'img_sandbox_0001' },
          { match: true, score: 98.5, liveness: { passed: true } },
          '2023-07-20T16:47:00Z',
        ),
        check(
          'document',
          true,
          { type: 'passport', number: 'A00000001', issuingCountry: 'NG' },
          { valid: true, expiresAt: '2030-06-30', flags: [] },
          '2023-07-20T16:50:00Z',
          '2023-07-21T09:00:00Z',
        ),
      ]),
    ],
  };
}

function demoFailedCheck(): KycUserJson {
  return {
    userRef: 'usr_demo_failedcheck',
    name: 'Musa Danjuma',
    status: false,
    level: 1,
    levels: [
      level(1, true, [
        check('gender', true, { gender: 'male' }, {}, '2024-03-10T11:00:00Z'),
        check(
          'name',
          true,
          { firstName: 'Musa', lastName: 'Danjuma' },
          { match: true },
          '2024-03-10T11:00:05Z',
        ),
      ]),
      level(2, false, [
        check(
          'bvn',
          false,
          { bvn: '22200000002' },
          { match: false, reason: 'Name on BVN does not match' },
          '2024-03-11T09:30:00Z',
          '2024-03-11T09:31:12Z',
        ),
      ]),
      level(3, false, []),
    ],
  };
}

// The demo users' names under the businesses after the first; non-ASCII ones among them, as
// the first business's usr_demo_tier3 has.
const OTHER_KYC_NAMES = [
  'Kofi Boateng',
  'Ifeoma Ọkọ́nkwọ',
  'Yusuf Garba',
  'Ṣadé Adéwálé',
  'Obinna Ezeh',
  'Rukayat Salami',
] as const;

/**
 * Fresh copies of the demo KYC users of a business (default the first, the documented ones).
 * Another business's users have the same userRefs, levels and checks under other names (the
 * `name` check's query follows), so a userRef tells which business answered.
 */
export function demoKycUsers(business: DemoBusiness = FIRST_BUSINESS): KycUserJson[] {
  const users = [demoNew(), demoTier1(), demoTier3(), demoFailedCheck()];
  if (business.index === 0) {
    return users;
  }
  users.forEach((user, position) => {
    const name =
      OTHER_KYC_NAMES[(business.index - 1 + position) % OTHER_KYC_NAMES.length] ??
      OTHER_KYC_NAMES[0];
    const [firstName = name, ...rest] = name.split(' ');
    user.name = name;
    for (const level of user.levels) {
      for (const c of level.kyc ?? []) {
        if (c.name === 'name') {
          c.query = { firstName, lastName: rest.join(' ') };
        }
      }
    }
  });
  return users;
}

/** Demo KYC users, for the banner and the README. */
export const KYC_DEMO_USERS: readonly ReferenceDoc[] = [
  { ref: 'usr_demo_new', description: 'level 0, tier_1..tier_3 unverified, no checks' },
  {
    ref: 'usr_demo_tier1',
    description: 'level 1: tier_1 verified (gender, name checks), tier_2/tier_3 unverified',
  },
  {
    ref: 'usr_demo_tier3',
    description: 'level 3, fully verified, 3 checks per level (bvn/nin/selfie…), non-ASCII name',
  },
  {
    ref: 'usr_demo_failedcheck',
    description: 'level 1, tier_2 has a failed bvn check (status false)',
  },
];

/** Failure KYC users, for the banner and the README. */
export const KYC_FAILURE_USERS: readonly ReferenceDoc[] = [
  {
    ref: 'usr_unknown (any other)',
    description: '404 {"message":"User not found","error":true,"data":null}',
  },
  { ref: 'usr_kyc_slow', description: 'a good answer, after the slow delay (default 10 s)' },
  { ref: 'usr_kyc_500', description: '500 with a JSON error body' },
  {
    ref: 'usr_kyc_envelope',
    description: '200 {"error":true,"message":"Service temporarily degraded","data":null}',
  },
  {
    ref: 'usr_kyc_gone',
    description: '200 {"error":true,"message":"User does not exist","data":null}',
  },
  { ref: 'usr_kyc_notjson', description: '200 with a text/html body' },
  {
    ref: 'usr_kyc_badshape',
    description: '200 {"error":false,"message":"ok","data":{"levels":"none"}}',
  },
  { ref: 'usr_kyc_reset', description: 'connection reset, no answer' },
];
