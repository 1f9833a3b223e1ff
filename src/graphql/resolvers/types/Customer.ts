import type { CustomerResolvers } from '../../generated/resolvers-types.ts';
import { readable } from '../unreadable.ts';

export const Customer: CustomerResolvers = {
  joinedAt: (customer) =>
    readable(customer.joinedAt, 'payment', 'data.customer.joinedAt is not a readable time'),
};
