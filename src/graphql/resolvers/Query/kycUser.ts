import type { GraphQLContext } from '../../../context.ts';
import { checkText } from '../../../model/input.ts';
import type { QueryResolvers } from '../../generated/resolvers-types.ts';

/**
 * One end user's KYC details as `kycUser(userRef)` reads them: the reference's form, before any
 * loader is touched (the viewer's right to it is the SDL's rule, checked before this).
 * Federation's `_entities` resolves a `KycUser` through this same function (types/KycUser.ts).
 */
export function readKycUser(ctx: GraphQLContext, userRef: string) {
  checkText('userRef', userRef, 128);
  return ctx.loaders.kycUser.load(userRef);
}

export const kycUser: NonNullable<QueryResolvers['kycUser']> = (_, { userRef }, ctx) =>
  readKycUser(ctx, userRef);
