import type { KycCheckResolvers } from '../../generated/resolvers-types.ts';
import { readTime } from '../times.ts';

export const KycCheck: KycCheckResolvers = {
  passed: (check) => check.status,
  createdAt: (check, _, ctx) =>
    readTime('kyc', 'createdAt', check.createdAt, ctx.settings.upstreamTimeZone),
  updatedAt: (check, _, ctx) =>
    readTime('kyc', 'updatedAt', check.updatedAt, ctx.settings.upstreamTimeZone),
};
