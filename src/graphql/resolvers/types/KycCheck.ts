import type { KycCheckResolvers } from '../../generated/resolvers-types.ts';
import { readable } from '../unreadable.ts';

export const KycCheck: KycCheckResolvers = {
  createdAt: (check) => readable(check.createdAt, 'kyc', 'createdAt is not a readable time'),
  updatedAt: (check) => readable(check.updatedAt, 'kyc', 'updatedAt is not a readable time'),
};
