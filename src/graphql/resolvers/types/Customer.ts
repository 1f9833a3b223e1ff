import type { CustomerResolvers } from '../../generated/resolvers-types.ts';
import { readTime } from '../times.ts';

export const Customer: CustomerResolvers = {
  fullName: (customer) => customer.fullname,
  joinedAt: (customer, _, ctx) =>
    readTime('payment', 'data.customer.joinedAt', customer.joinedAt, ctx.settings.upstreamTimeZone),
};
