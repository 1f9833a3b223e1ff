import { assertCanReadTransaction } from '../../../auth.ts';
import { checkTxRef } from '../../../model/input.ts';
import type { QueryResolvers } from '../../generated/resolvers-types.ts';

export const transaction: NonNullable<QueryResolvers['transaction']> = (_, { txRef }, ctx) => {
  assertCanReadTransaction(ctx.viewer, txRef);
  return ctx.loaders.transaction.load(checkTxRef(txRef));
};
