/**
 * Apollo Client's subscriptions over HTTP (multipart/mixed, `subscriptionSpec=1.0`), as HttpLink
 * sends them by default, against `transactionStatus`.
 */
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandboxGateway, type TestGateway } from '../helpers/gateway.ts';

let gateway: TestGateway;

let close: () => Promise<void>;
beforeAll(async () => {
  ({ gateway, close } = await startSandboxGateway({ LIVE_POLL_MS: '200' }, { pendingSeconds: 1 }));
});
afterAll(() => close());

const STATUS = gql`
  subscription ApolloStatus($txRef: ID!) {
    transactionStatus(txRef: $txRef) {
      txRef
      status
    }
  }
`;

function client(token: string) {
  return new ApolloClient({
    link: new HttpLink({
      uri: `${gateway.url}/graphql`,
      headers: { authorization: `Bearer ${token}` },
    }),
    cache: new InMemoryCache(),
  });
}

/** Every value until completion, or the error. */
function collect(apollo: ApolloClient, txRef: string) {
  return new Promise<{ values: unknown[]; error?: unknown }>((resolve) => {
    const values: unknown[] = [];
    apollo.subscribe({ query: STATUS, variables: { txRef } }).subscribe({
      next: (value) => values.push(value.error ? { error: value.error } : value.data),
      error: (error: unknown) => resolve({ values, error }),
      complete: () => resolve({ values }),
    });
  });
}

it('follows a pending payment to SUCCESSFUL, then completes', async () => {
  const txRef = `NT-PENDINGAPOLLO${Date.now()}`;
  const { values, error } = await collect(client(await gateway.token()), txRef);
  expect(error).toBeUndefined();
  expect(values).toEqual([
    { transactionStatus: { __typename: 'Transaction', txRef, status: 'PENDING' } },
    { transactionStatus: { __typename: 'Transaction', txRef, status: 'SUCCESSFUL' } },
  ]);
});

it('gets the error of an unknown reference', async () => {
  // Apollo Client 4 hands GraphQL errors of a subscription to `next`, as `{ data, error }`.
  const { values, error } = await collect(client(await gateway.token()), 'NT-UNKNOWN999');
  expect(error).toBeUndefined();
  expect(values).toHaveLength(1);
  expect(JSON.stringify(values[0])).toContain('BAD_USER_INPUT');
  expect(JSON.stringify(values[0])).toContain('does not know this transaction');
});

it('receives each part as it exists: PENDING well before the payment settles', async () => {
  // The JSON transport used to buffer the whole multipart answer, so the
  // first part came only when the stream ended (pendingSeconds later).
  const txRef = `NT-PENDINGARRIVAL${Date.now()}`;
  const started = performance.now();
  const arrivals: Array<{ at: number; status: unknown }> = [];
  await new Promise<void>((resolve, reject) => {
    void gateway.token().then((token) =>
      client(token)
        .subscribe({ query: STATUS, variables: { txRef } })
        .subscribe({
          next: (value) =>
            arrivals.push({
              at: performance.now() - started,
              status: (value.data as { transactionStatus?: { status?: unknown } } | undefined)
                ?.transactionStatus?.status,
            }),
          error: reject,
          complete: resolve,
        }),
    );
  });
  expect(arrivals.map((a) => a.status)).toEqual(['PENDING', 'SUCCESSFUL']);
  // Buffered, both parts would arrive together when the stream ends; as they exist, the first
  // arrives while the payment is still pending (it settles a second after the first read).
  expect((arrivals[1]?.at ?? 0) - (arrivals[0]?.at ?? 0)).toBeGreaterThan(300);
});
