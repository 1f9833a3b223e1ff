import type { KycUserResolvers } from '../../generated/resolvers-types.ts';
import { readKycUser } from '../Query/kycUser.ts';

export const KycUser: KycUserResolvers = {
  // Federation: a router's representation `{ __typename: "KycUser", userRef }` is read as
  // `kycUser(userRef)` is (src/graphql/federation.ts checks its shape first).
  __resolveReference: (reference, ctx) => readKycUser(ctx, reference.userRef),
  // Found, not stored: a copy in the record would double the level's bytes in the cache.
  currentLevel: (user) => user.levels.find((level) => level.level === user.level) ?? null,
};
