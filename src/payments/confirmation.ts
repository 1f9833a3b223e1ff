/**
 * `confirmPayment`: a payment checked against the merchant's order. The order is read and
 * refused before anything else (BAD_USER_INPUT, no upstream call); the comparison is exact, on
 * BigInt minor units of the decimal the payment service wrote (the record's `Money`, read from
 * the JSON text), never on a binary float; every problem is listed; and a payment that passes
 * every check is claimed for the order (claims.ts), so that one payment confirms one order.
 */
import { BadUserInputError } from '../errors.ts';
import type {
  OrderInput,
  PaymentProblem,
  ResolversTypes,
} from '../graphql/generated/resolvers-types.ts';
import { checkText } from '../model/input.ts';
import { type Decimal, isCurrencyCode, minorUnitsOf, parseDecimal } from '../model/money.ts';
import { decimalOfExact, type UpstreamTransaction } from '../model/records.ts';
import type { ClaimStore } from './claims.ts';

/** An order as `confirmPayment` compares it: checked, the currency in capitals. */
export interface Order {
  id: string;
  amount: Decimal;
  currency: string;
  merchantRef: string | null;
}

export const MAX_ORDER_ID = 128;
export const MAX_MERCHANT_REF = 256;
/** Longest amount text: far beyond any price, short enough that no parse costs anything. */
const MAX_AMOUNT_CHARS = 40;

/** Plain notation: digits, optionally a point and digits; no sign, exponent or spaces. */
const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * The order checked: an id of 1 to 128 characters, three letters of ISO 4217, a positive amount
 * in plain notation with at most the currency's minor digits, a merchantRef of 1 to 256.
 * @throws BadUserInputError naming the first field that is wrong.
 */
export function readOrder(input: OrderInput): Order {
  const id = checkText('order.id', input.id, MAX_ORDER_ID);
  // ASCII letters before the case is folded: `ı`, say, folds to `I`.
  const currency = /^[A-Za-z]{3}$/.test(input.currency) ? input.currency.toUpperCase() : '';
  if (!isCurrencyCode(currency)) {
    throw new BadUserInputError(
      'order.currency must be three letters of ISO 4217, e.g. NGN, USD, JPY or KWD.',
    );
  }
  const minorUnits = minorUnitsOf(currency);
  const match = input.amount.length <= MAX_AMOUNT_CHARS && PLAIN_DECIMAL.exec(input.amount);
  const amount = match ? parseDecimal(input.amount) : undefined;
  if (!match || !amount || amount.unscaled <= 0n) {
    throw new BadUserInputError(
      `order.amount must be a positive decimal in plain notation, e.g. "1500.50" (not 0, negative, or with an exponent), of at most ${MAX_AMOUNT_CHARS} characters.`,
    );
  }
  if ((match[2] ?? '').length > minorUnits) {
    throw new BadUserInputError(
      `order.amount has more digits after the point than ${currency} has (${minorUnits}).`,
    );
  }
  const merchantRef =
    input.merchantRef === null || input.merchantRef === undefined
      ? null
      : checkText('order.merchantRef', input.merchantRef, MAX_MERCHANT_REF);
  return { id, amount, currency, merchantRef };
}

/** -1, 0 or 1 as `a` is less than, equal to or more than `b`: exact, on BigInt. */
export function compareDecimals(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const scale = Math.max(a.scale, b.scale);
  const left = a.unscaled * 10n ** BigInt(scale - a.scale);
  const right = b.unscaled * 10n ** BigInt(scale - b.scale);
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * What keeps the payment from confirming the order, before any claim: in the order of the
 * `PaymentProblem` enum. Amounts are compared only in the same currency (in two currencies no
 * comparison means anything): exactly, digits beyond the currency's minor unit included, so a
 * payment of NGN 1500.505 is too low for an order of NGN 1500.51.
 */
export function compareWithOrder(record: UpstreamTransaction, order: Order): PaymentProblem[] {
  const problems: PaymentProblem[] = [];
  // Both the status and the success flag the payment service sends must say paid.
  if (record.status !== 'SUCCESSFUL' || !record.succeeded) problems.push('NOT_SUCCESSFUL');
  const sameCurrency = record.currency === order.currency;
  if (sameCurrency) {
    const paid = record.amountExact;
    // No amount reported: nothing is shown paid.
    const amount = paid === null ? undefined : decimalOfExact(paid);
    const comparison = amount === undefined ? -1 : compareDecimals(amount, order.amount);
    if (comparison < 0) problems.push('AMOUNT_TOO_LOW');
    if (comparison > 0) problems.push('AMOUNT_TOO_HIGH');
  } else {
    problems.push('CURRENCY_MISMATCH');
  }
  if (order.merchantRef !== null && record.merchantRef !== order.merchantRef) {
    problems.push('MERCHANT_REF_MISMATCH');
  }
  return problems;
}

type Confirmation = ResolversTypes['PaymentConfirmation'];

/**
 * The outcome counted: `confirmed`, the first problem, or `refused` when the claims could not be
 * made or trusted (their store down, a claim that does not open, a ledger found lost, claims in
 * memory in production) and the answer was an error.
 */
export type ConfirmationOutcome = 'confirmed' | PaymentProblem | 'refused';

/** Compares, claims and counts; one per process. */
export class PaymentConfirmations {
  readonly #claims: ClaimStore;
  readonly #count: (outcome: ConfirmationOutcome) => void;

  constructor(claims: ClaimStore, count: (outcome: ConfirmationOutcome) => void) {
    this.#claims = claims;
    this.#count = count;
  }

  /**
   * The answer for `order` given the record just fetched fresh (`null`: the payment service does
   * not know the reference). Claims the payment only when nothing else is wrong.
   */
  async confirm(
    txRef: string,
    order: Order,
    record: UpstreamTransaction | null,
  ): Promise<Confirmation> {
    const problems: PaymentProblem[] =
      record === null ? ['NOT_FOUND'] : compareWithOrder(record, order);
    if (record !== null) {
      // Claimed without regard to case: were the payment service to read `NT-abc` as `NT-ABC`,
      // the other spelling must not confirm a second order.
      const claimed = txRef.toUpperCase();
      let ours: boolean;
      try {
        ours =
          problems.length === 0
            ? await this.#claims.claim(claimed, order.id)
            : !(await this.#claims.heldByAnother(claimed, order.id));
      } catch (error) {
        this.#count('refused');
        throw error;
      }
      if (!ours) problems.push('ALREADY_CONFIRMED_FOR_ANOTHER_ORDER');
    }
    this.#count(problems[0] ?? 'confirmed');
    return { confirmed: problems.length === 0, problems, transaction: record };
  }
}
