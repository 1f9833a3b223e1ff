import { assertCanReadTransaction } from '../../../auth.ts';
import type { GraphQLContext } from '../../../context.ts';
import { checkTxRef } from '../../../model/input.ts';
import type { QueryResolvers } from '../../generated/resolvers-types.ts';

/**
 * One payment as `transaction(txRef)` reads it: the viewer's right to it, then the reference's
 * form, before any loader is touched. Federation's `_entities` resolves a `Transaction` through
 * this same function (types/Transaction.ts).
 */
export function readTransaction(ctx: GraphQLContext, txRef: string) {
  assertCanReadTransaction(ctx.viewer, txRef);
  return ctx.loaders.transaction.load(checkTxRef(txRef));
}

export const transaction: NonNullable<QueryResolvers['transaction']> = (_, { txRef }, ctx) =>
  readTransaction(ctx, txRef);
