import { assertCanReadKyc } from '../../../auth.ts';
import { checkText } from '../../../model/input.ts';
import type { QueryResolvers } from '../../generated/resolvers-types.ts';

export const kycUser: NonNullable<QueryResolvers['kycUser']> = (_, { userRef }, ctx) => {
  checkText('userRef', userRef, 128);
  assertCanReadKyc(ctx.viewer, userRef);
  return ctx.loaders.kycUser.load(userRef);
};
