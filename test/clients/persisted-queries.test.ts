/**
 * Automatic persisted queries with the clients teams use, as they are: Apollo Client's
 * persisted-queries link (POST, and GET for hashed queries) and urql's persisted exchange. A
 * fetch wrapper counts what each client sends.
 */
import { createHash } from 'node:crypto';
import { ApolloClient, gql as apolloGql, HttpLink, InMemoryCache } from '@apollo/client';
import { createPersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client, fetchExchange, gql as urqlGql } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../sandbox/index.ts';
import {
  codesOf,
  sandboxUpstreams,
  startGateway,
  startSandboxGateway,
  type TestGateway,
} from '../helpers/gateway.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
let token: string;

let close: () => Promise<void>;
beforeAll(async () => {
  ({ sandbox, gateway, token, close } = await startSandboxGateway());
});
afterAll(() => close());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A fetch that records each request: method, and whether it carried the query text. */
function recordingFetch() {
  const sent: Array<{ method: string; withQuery: boolean; hashed: boolean }> = [];
  const fetchFn: typeof fetch = async (input, init) => {
    const url = String(input);
    const body = typeof init?.body === 'string' ? init.body : '';
    sent.push({
      method: init?.method ?? 'GET',
      withQuery: body.includes('"query"') || /[?&]query=/.test(url),
      hashed: body.includes('persistedQuery') || url.includes('persistedQuery'),
    });
    return fetch(input, init);
  };
  return { sent, fetchFn };
}

function apollo(target: TestGateway, options: { useGET?: boolean } = {}) {
  const { sent, fetchFn } = recordingFetch();
  const link = createPersistedQueryLink({
    sha256,
    ...(options.useGET && { useGETForHashedQueries: true }),
  }).concat(
    new HttpLink({
      uri: `${target.url}/graphql`,
      fetch: fetchFn,
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  const client = new ApolloClient({ link, cache: new InMemoryCache() });
  return { client, sent };
}

describe('Apollo Client persisted-queries link', () => {
  it.each([
    ['POST', false],
    ['GET for hashed queries', true],
  ])('registers on first use, then sends the hash alone (%s)', async (_label, useGET) => {
    const ref = useGET ? 'NT-SUCCESS001' : 'NT-FAILED001';
    // A document of its own per case: the other case must not have registered it already.
    const QUERY = useGET
      ? apolloGql`query ApolloApqGet($ref: ID!) { transaction(txRef: $ref) { txRef status } }`
      : apolloGql`query ApolloApqPost($ref: ID!) { transaction(txRef: $ref) { txRef status } }`;
    const first = apollo(gateway, { useGET });
    const one = await first.client.query({
      query: QUERY,
      variables: { ref },
      fetchPolicy: 'network-only',
    });
    expect(one.data).toEqual({
      transaction: {
        __typename: 'Transaction',
        txRef: ref,
        status: useGET ? 'SUCCESSFUL' : 'FAILED',
      },
    });
    // Hash alone (not found), then hash and query; the second client sends the hash alone.
    expect(first.sent.map((s) => s.withQuery)).toEqual([false, true]);
    const second = apollo(gateway, { useGET });
    const two = await second.client.query({
      query: QUERY,
      variables: { ref },
      fetchPolicy: 'network-only',
    });
    expect(two.data).toEqual(one.data);
    expect(second.sent).toEqual([
      { method: useGET ? 'GET' : 'POST', withQuery: false, hashed: true },
    ]);
  });
});

describe('urql persisted exchange', () => {
  it('registers on first use, then sends the hash alone', async () => {
    const QUERY = urqlGql`query UrqlApq { transaction(txRef: "NT-SUCCESS001") { txRef } }`;
    const make = () => {
      const { sent, fetchFn } = recordingFetch();
      const client = new Client({
        url: `${gateway.url}/graphql`,
        fetch: fetchFn,
        fetchOptions: { headers: { authorization: `Bearer ${token}` } },
        exchanges: [persistedExchange({ preferGetForPersistedQueries: false }), fetchExchange],
      });
      return { client, sent };
    };
    const first = make();
    const one = await first.client.query(QUERY, {}, { requestPolicy: 'network-only' }).toPromise();
    expect(one.error).toBeUndefined();
    expect(one.data).toEqual({
      transaction: { txRef: 'NT-SUCCESS001' },
    });
    expect(first.sent.map((s) => s.withQuery)).toEqual([false, true]);
    const second = make();
    const two = await second.client.query(QUERY, {}, { requestPolicy: 'network-only' }).toPromise();
    expect(two.data).toEqual(one.data);
    expect(second.sent.map((s) => s.withQuery)).toEqual([false]);
  });
});

describe('the hash is checked', () => {
  const post = (target: TestGateway, body: unknown) =>
    fetch(`${target.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify(body),
    });

  it('refuses a query sent with a hash that is not its own, and stores nothing', async () => {
    const query = '{ gatewayInfo { version } }';
    const wrong = sha256('{ gatewayInfo { sandbox } }');
    const refused = await post(gateway, {
      query,
      extensions: { persistedQuery: { version: 1, sha256Hash: wrong } },
    });
    expect(refused.status).toBe(400);
    expect(codesOf((await refused.json()) as { errors?: [] } as never)).toEqual([
      'GRAPHQL_VALIDATION_FAILED',
    ]);
    const after = await post(gateway, {
      extensions: { persistedQuery: { version: 1, sha256Hash: wrong } },
    });
    expect(after.status).toBe(200);
    const body = (await after.json()) as {
      errors: Array<{ message: string; extensions: { code: string } }>;
    };
    expect(body.errors[0]).toMatchObject({
      message: 'PersistedQueryNotFound',
      extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
    });
  });

  it('with TRUSTED_DOCUMENTS=only, refuses to register an unknown document', async () => {
    const strict = await startGateway(sandboxUpstreams(sandbox), { TRUSTED_DOCUMENTS: 'only' });
    try {
      const query = '{ gatewayInfo { version } }';
      const registered = await post(strict, {
        query,
        extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } },
      });
      expect(registered.status).toBe(400);
      const hashOnly = await post(strict, {
        extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } },
      });
      expect(codesOf((await hashOnly.json()) as never)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    } finally {
      await strict.close();
    }
  });
});

describe.skipIf(skipRedisTests('persisted-queries'))(
  'shared between replicas through Redis',
  () => {
    let redis: TestRedis;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it('a document registered on one replica runs by hash on another', async () => {
      const [a, b] = await Promise.all([
        startGateway(sandboxUpstreams(sandbox), { CACHE_URL: redis.url }),
        startGateway(sandboxUpstreams(sandbox), { CACHE_URL: redis.url }),
      ]);
      try {
        for (const g of [a, b]) {
          for (let i = 0; i < 40 && (await fetch(`${g.url}/readyz`)).status !== 200; i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
        const QUERY = apolloGql`query Shared { transaction(txRef: "NT-SUCCESS001") { status } }`;
        const onA = apollo(a);
        await onA.client.query({ query: QUERY, fetchPolicy: 'network-only' });
        expect(onA.sent.map((s) => s.withQuery)).toEqual([false, true]);
        const onB = apollo(b);
        const result = await onB.client.query({ query: QUERY, fetchPolicy: 'network-only' });
        expect(result.data).toEqual({
          transaction: { __typename: 'Transaction', status: 'SUCCESSFUL' },
        });
        expect(onB.sent.map((s) => s.withQuery)).toEqual([false]);
      } finally {
        await a.close();
        await b.close();
      }
    });
  },
);
