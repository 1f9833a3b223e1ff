import type { KycUserResolvers } from '../../generated/resolvers-types.ts';

export const KycUser: KycUserResolvers = {
  // The reference asked by, when the upstream leaves it out of the record.
  userRef: (user) => user.userRef ?? user.requestedUserRef,
  verified: (user) => user.status,
  currentLevel: (user) => user.levels.find((level) => level.level === user.level) ?? null,
};
