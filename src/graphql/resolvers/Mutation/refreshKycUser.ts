import { checkText } from '../../../model/input.ts';
import type { MutationResolvers } from '../../generated/resolvers-types.ts';

export const refreshKycUser: NonNullable<MutationResolvers['refreshKycUser']> = (
  _,
  { userRef },
  ctx,
) => {
  checkText('userRef', userRef, 128);
  return ctx.loaders.uncachedKycUser.load(userRef);
};
