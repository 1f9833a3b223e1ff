import { checkTxRef } from '../../../model/input.ts';
import type { MutationResolvers } from '../../generated/resolvers-types.ts';

export const verifyTransaction: NonNullable<MutationResolvers['verifyTransaction']> = (
  _,
  { txRef },
  ctx,
) => {
  return ctx.loaders.uncachedTransaction.load(checkTxRef(txRef));
};
