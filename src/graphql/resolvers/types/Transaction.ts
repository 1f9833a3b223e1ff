import { UpstreamBadResponseError } from '../../../errors.ts';
import { type ExactAmount, moneyOfExact } from '../../../model/records.ts';
import type { TransactionResolvers } from '../../generated/resolvers-types.ts';
import { readTransaction } from '../Query/transaction.ts';
import { readable } from '../unreadable.ts';

const NO_CURRENCY = 'data.currency is missing';

/** A `…Money` field: written out from the exact amount, only for the fields asked for. */
const money = (exact: ExactAmount | null, currency: string | null) =>
  readable(moneyOfExact(exact, currency), 'payment', NO_CURRENCY);

/** The record was normalized when it arrived: the other fields are its properties as they are. */
export const Transaction: TransactionResolvers = {
  // Federation: a router's representation `{ __typename: "Transaction", txRef }` is read as
  // `transaction(txRef)` is, nothing of it taken as the record (src/graphql/federation.ts
  // checks its shape first).
  __resolveReference: (reference, ctx) => readTransaction(ctx, reference.txRef),
  currency: (tx) => {
    if (tx.currency === null) throw new UpstreamBadResponseError('payment', NO_CURRENCY);
    return tx.currency;
  },
  amountMoney: (tx) => money(tx.amountExact, tx.currency),
  appFeeMoney: (tx) => money(tx.appFeeExact, tx.currency),
  merchantFeeMoney: (tx) => money(tx.merchantFeeExact, tx.currency),
  timestamp: (tx) => readable(tx.timestamp, 'payment', 'data.txTimestamp is not a readable time'),
};
