/**
 * Live status over SSE, polled by this process (contract §10): the record at once, then on each
 * status change; ends after a final status, when the client leaves, or at the watch limit.
 * Polls bypass the cache and write it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { assertCanReadTransactions } from '../../../auth/viewer.ts';
import { BadUserInputError, GatewayError, UpstreamError } from '../../../errors.ts';
import { checkTxRef } from '../../../model/input.ts';
import { isFinalStatus, normalizeStatus } from '../../../model/status.ts';
import type { UpstreamTransaction } from '../../../upstream/shapes.ts';
import type { SubscriptionResolvers } from '../../generated/resolvers-types.ts';

type Payload = { transactionStatus: UpstreamTransaction };

export const transactionStatus: NonNullable<SubscriptionResolvers['transactionStatus']> = {
  subscribe: async function* (_, { txRef }, ctx): AsyncGenerator<Payload> {
    assertCanReadTransactions(ctx.viewer);
    checkTxRef(txRef);
    const { pollMs, maxPollMs, maxWatchMs } = ctx.settings.live;
    const started = Date.now();
    let lastStatus: string | undefined;
    let delay = pollMs;
    for (;;) {
      let record: UpstreamTransaction | null | undefined;
      try {
        record = await ctx.sources.transaction(txRef, { fresh: true });
      } catch (error) {
        // A passing upstream failure does not end the watch; the first read must succeed.
        if (lastStatus === undefined || !(error instanceof UpstreamError)) throw error;
      }
      if (record === null) {
        throw new BadUserInputError('The payment service does not know this transaction.');
      }
      if (record) {
        const status = normalizeStatus(record.txStatus);
        if (status !== lastStatus) {
          lastStatus = status;
          yield { transactionStatus: record };
        }
        if (isFinalStatus(status)) return;
      }
      const elapsed = Date.now() - started;
      if (elapsed >= maxWatchMs) {
        throw new GatewayError(
          'UPSTREAM_TIMEOUT',
          'The transaction did not reach a final status within the watch time.',
        );
      }
      if (elapsed > 60_000) delay = Math.min(delay * 2, maxPollMs);
      try {
        await sleep(Math.min(delay, maxWatchMs - elapsed), undefined, { signal: ctx.signal() });
      } catch {
        return;
      }
    }
  },
  resolve: (payload: Payload) => payload.transactionStatus,
};
