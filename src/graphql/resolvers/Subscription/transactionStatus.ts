/**
 * Live status over SSE: the record at once, then on each status change; ends
 * after a final status, when the client leaves, or at the watch limit. The polling itself is the
 * live hub's (src/live/): one poller per txRef, for this process or for the whole cluster.
 */
import { checkTxRef } from '../../../model/input.ts';
import type { UpstreamTransaction } from '../../../model/records.ts';
import type { SubscriptionResolvers } from '../../generated/resolvers-types.ts';

type Payload = { transactionStatus: UpstreamTransaction };

export const transactionStatus: NonNullable<SubscriptionResolvers['transactionStatus']> = {
  subscribe: async function* (_, { txRef }, ctx): AsyncGenerator<Payload> {
    // The input check comes before any read or poll (and the SDL's access rule before it).
    checkTxRef(txRef);
    for await (const record of ctx.live.watch(txRef, ctx.signal(), ctx.caller)) {
      yield { transactionStatus: record };
    }
  },
  resolve: (payload: Payload) => payload.transactionStatus,
};
