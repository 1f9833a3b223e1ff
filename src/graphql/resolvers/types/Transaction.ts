import { UpstreamBadResponseError } from '../../../errors.ts';
import { toCents } from '../../../model/money.ts';
import { normalizeStatus } from '../../../model/status.ts';
import type { TransactionResolvers } from '../../generated/resolvers-types.ts';
import { readTime } from '../times.ts';

const cents = (value: number | null): number | null => (value === null ? null : toCents(value));

export const Transaction: TransactionResolvers = {
  status: (tx) => normalizeStatus(tx.txStatus),
  rawStatus: (tx) => tx.txStatus,
  // Missing means "not reported as successful": with money, the safe reading.
  succeeded: (tx) => tx.txIsSucces === true,
  amount: (tx) => cents(tx.amount),
  appFee: (tx) => cents(tx.appFee),
  merchantFee: (tx) => cents(tx.merchantFee),
  currency: (tx) => {
    if (tx.currency === null || tx.currency.trim() === '') {
      throw new UpstreamBadResponseError('payment', 'data.currency is missing');
    }
    return tx.currency.trim().toUpperCase();
  },
  deviceFingerprint: (tx) => tx.deviceFingerPrint,
  timestamp: (tx, _, ctx) =>
    readTime('payment', 'data.txTimestamp', tx.txTimestamp, ctx.settings.upstreamTimeZone),
};
