import { checkLevelSlug, checkText } from '../../../model/input.ts';
import type { QueryResolvers } from '../../generated/resolvers-types.ts';

/** Public values only: the secret key is not in the settings this reads. */
export const kycSdkConfig: NonNullable<QueryResolvers['kycSdkConfig']> = (
  _,
  { userRef, name, levelSlug },
  ctx,
) => {
  checkText('userRef', userRef, 128);
  checkText('name', name, 200);
  checkLevelSlug(levelSlug);
  const { sdk } = ctx.settings;
  return {
    scriptUrl: sdk.scriptUrl,
    publicKey: sdk.publicKey,
    slug: sdk.businessSlug,
    userRef,
    name,
    levelSlug,
  };
};
