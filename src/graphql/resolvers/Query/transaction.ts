import type { GraphQLContext } from '../../../context.ts';
import { checkTxRef } from '../../../model/input.ts';
import type { QueryResolvers } from '../../generated/resolvers-types.ts';

/**
 * One payment as `transaction(txRef)` reads it: the reference's form, before any loader is
 * touched (the viewer's right to it is the SDL's rule, checked before this). Federation's
 * `_entities` resolves a `Transaction` through this same function (types/Transaction.ts).
 */
export function readTransaction(ctx: GraphQLContext, txRef: string) {
  return ctx.loaders.transaction.load(checkTxRef(txRef));
}

export const transaction: NonNullable<QueryResolvers['transaction']> = (_, { txRef }, ctx) =>
  readTransaction(ctx, txRef);
