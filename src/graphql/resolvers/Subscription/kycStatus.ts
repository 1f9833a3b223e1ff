/**
 * Live KYC details: the user's record at once, then on each change of level, verification or a
 * level's or check's status; completes quietly at the watch time, or when the client leaves.
 * The polling and the pushed notifications are the live hub's (src/live/).
 */
import { checkText } from '../../../model/input.ts';
import type { UpstreamKycUser } from '../../../model/records.ts';
import type { SubscriptionResolvers } from '../../generated/resolvers-types.ts';

type Payload = { kycStatus: UpstreamKycUser };

export const kycStatus: NonNullable<SubscriptionResolvers['kycStatus']> = {
  subscribe: async function* (_, { userRef }, ctx): AsyncGenerator<Payload> {
    // The input check comes before any read or poll, as for kycUser (and the SDL's access
    // rule before it).
    checkText('userRef', userRef, 128);
    for await (const record of ctx.live.watchKyc(userRef, ctx.signal(), ctx.caller)) {
      yield { kycStatus: record };
    }
  },
  resolve: (payload: Payload) => payload.kycStatus,
};
