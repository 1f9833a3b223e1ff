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
