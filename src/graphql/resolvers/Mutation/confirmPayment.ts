import { assertCanReadTransactions } from '../../../auth.ts';
import { checkTxRef } from '../../../model/input.ts';
import { readOrder } from '../../../payments/confirmation.ts';
import type { MutationResolvers } from '../../generated/resolvers-types.ts';

/**
 * Scope, then the arguments (no upstream call for either), then the record fresh from the
 * payment service and stored as `verifyTransaction` stores it, then the comparison and claim.
 */
export const confirmPayment: NonNullable<MutationResolvers['confirmPayment']> = async (
  _,
  { txRef, order },
  ctx,
) => {
  assertCanReadTransactions(ctx.viewer);
  const checkedRef = checkTxRef(txRef);
  const checkedOrder = readOrder(order);
  const record = await ctx.loaders.uncachedTransaction.load(checkedRef);
  return ctx.confirmations.confirm(checkedRef, checkedOrder, record);
};
