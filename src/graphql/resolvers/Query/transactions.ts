import { BadUserInputError } from '../../../errors.ts';
import { checkTxRef } from '../../../model/input.ts';
import type { UpstreamTransaction } from '../../../model/records.ts';
import { positionRefusals } from '../../access.ts';
import type { QueryResolvers } from '../../generated/resolvers-types.ts';

/**
 * Every reference is checked before any is loaded, so one bad entry fails the whole field with
 * no upstream call. Each position is its own promise: a failure stays at its index. A reference
 * the SDL's row rule refuses to the viewer (graphql/access.ts) is refused at its position, and
 * never loaded.
 */
export const transactions: NonNullable<QueryResolvers['transactions']> = (_, args, ctx) => {
  const { txRefs } = args;
  const max = ctx.settings.maxBatchSize;
  if (txRefs.length > max) {
    throw new BadUserInputError(`txRefs may hold at most ${max} entries (duplicates counted).`);
  }
  txRefs.forEach((ref, index) => {
    try {
      checkTxRef(ref);
    } catch {
      throw new BadUserInputError(
        `txRefs[${index}] must be "NT-" followed by 1 to 64 letters or digits.`,
      );
    }
  });
  // graphql-js awaits each item on its own, so a null, a rejection or an Error value stays at
  // its position; the generated item type has no slot for "a promise of null" or an error,
  // hence the widening cast.
  // A failed read is the Error value at its position, never a rejection: graphql-jit's list
  // code miscounts rejections that settle out of order (each reference settles on its own).
  const refused = positionRefusals(args);
  return txRefs.map(
    (ref, index) =>
      refused.get(index) ?? ctx.loaders.transaction.load(ref).catch((error: unknown) => error),
  ) as Array<Promise<UpstreamTransaction>>;
};
