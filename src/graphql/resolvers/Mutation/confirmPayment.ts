import { checkTxRef } from '../../../model/input.ts';
import { readOrder } from '../../../payments/confirmation.ts';
import type { MutationResolvers } from '../../generated/resolvers-types.ts';

/**
 * The arguments (no upstream call; the scope is the SDL's rule, checked before this), then the record fresh from the
 * payment service and stored as `verifyTransaction` stores it, then the comparison and claim.
 */
export const confirmPayment: NonNullable<MutationResolvers['confirmPayment']> = async (
  _,
  { txRef, order },
  ctx,
) => {
  const checkedRef = checkTxRef(txRef);
  const checkedOrder = readOrder(order);
  const record = await ctx.loaders.uncachedTransaction.load(checkedRef);
  return ctx.confirmations.confirm(checkedRef, checkedOrder, record);
};
