import type { KycLevelResolvers } from '../../generated/resolvers-types.ts';

export const KycLevel: KycLevelResolvers = {
  name: (level) => level.levelName,
  slug: (level) => level.levelSlug,
  verified: (level) => level.status,
  checks: (level) => level.kyc,
};
