/**
 * `transactions` settles each reference on its own (the loaders no longer wait for a batch's
 * slowest read, so that `@stream` sends each entry as it comes): whatever order the upstream
 * answers arrive in, and however many fail, the list keeps one entry per reference asked, each
 * error at its own position. (graphql-jit, the compiled execution, miscounted such a list when
 * failures were rejections settling out of order: one entry too many.)
 */
import { expect, it } from 'vitest';
import { transactionBody } from '../helpers/fixture.ts';
import { setup } from '../helpers/fixture-gateway.ts';
import { gql } from '../helpers/gateway.ts';

/** What the payment fixture does for each reference: an answer, after a delay (ms). */
const ANSWERS: Record<string, { kind: 'ok' | 'unknown' | 'refused' | 'garbled' }> = {
  'NT-OK1': { kind: 'ok' },
  'NT-UNKNOWN1': { kind: 'unknown' },
  'NT-REFUSED1': { kind: 'refused' },
  'NT-OK2': { kind: 'ok' },
  'NT-GARBLED1': { kind: 'garbled' },
};
const REFS = Object.keys(ANSWERS);

it('keeps one entry per reference, errors at their positions, whatever order the answers arrive in', async () => {
  // Delays chosen per round so that successes, unknowns and failures settle in varied orders.
  const orders = [
    [0, 30, 10, 0, 20],
    [20, 0, 0, 30, 10],
    [30, 10, 20, 0, 0],
    [0, 0, 30, 20, 10],
  ];
  let round = 0;
  const { gateway, token } = await setup(
    (request) => {
      const txRef = request.path.split('/').pop() ?? '';
      const delayMs = orders[round]?.[REFS.indexOf(txRef)] ?? 0;
      switch (ANSWERS[txRef]?.kind) {
        case 'ok':
          return { delayMs, body: transactionBody({ paymentRef: txRef }) };
        case 'unknown':
          return { delayMs, status: 404, body: { error: true, message: 'not found' } };
        case 'refused':
          return { delayMs, status: 401, body: { error: true, message: 'bad token' } };
        default:
          return { delayMs, body: 'not json' };
      }
    },
    { env: { CACHE_TTL_FINAL_SECONDS: '0', CACHE_TTL_NOT_FOUND_SECONDS: '0' } },
  );
  for (round = 0; round < orders.length; round++) {
    const response = await gql<{ transactions: Array<{ txRef: string } | null> }, unknown>(
      gateway,
      'query Positions($txRefs: [ID!]!) { transactions(txRefs: $txRefs) { txRef } }',
      { txRefs: REFS },
      token,
    );
    expect(response.data?.transactions, `round ${round}`).toEqual([
      { txRef: 'NT-OK1' },
      null,
      null,
      { txRef: 'NT-OK2' },
      null,
    ]);
    const byPosition = (response.errors ?? [])
      .map((error) => [error.path?.[1], error.extensions?.code])
      .sort(([a], [b]) => Number(a) - Number(b));
    expect(byPosition, `round ${round}`).toEqual([
      [2, 'UPSTREAM_AUTH_FAILED'],
      [4, 'UPSTREAM_BAD_RESPONSE'],
    ]);
  }
});
