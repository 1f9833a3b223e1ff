import { assertCanReadKyc } from '../../../auth.ts';
import type { GraphQLContext } from '../../../context.ts';
import { checkText } from '../../../model/input.ts';
import type { QueryResolvers } from '../../generated/resolvers-types.ts';

/**
 * One end user's KYC details as `kycUser(userRef)` reads them: the reference's form, then the
 * viewer's right to it, before any loader is touched. Federation's `_entities` resolves a
 * `KycUser` through this same function (types/KycUser.ts).
 */
export function readKycUser(ctx: GraphQLContext, userRef: string) {
  checkText('userRef', userRef, 128);
  assertCanReadKyc(ctx.viewer, userRef);
  return ctx.loaders.kycUser.load(userRef);
}

export const kycUser: NonNullable<QueryResolvers['kycUser']> = (_, { userRef }, ctx) =>
  readKycUser(ctx, userRef);
