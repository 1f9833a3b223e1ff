import { assertCanReadTransactions } from '../../../auth/viewer.ts';
import { checkTxRef } from '../../../model/input.ts';
import type { QueryResolvers } from '../../generated/resolvers-types.ts';

export const transaction: NonNullable<QueryResolvers['transaction']> = (_, { txRef }, ctx) => {
  assertCanReadTransactions(ctx.viewer);
  return ctx.loaders.transaction.load(checkTxRef(txRef));
};
