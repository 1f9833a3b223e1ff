/**
 * The gateway against fixture upstreams on loopback that answer what each test needs: exact
 * requests, call counts, caching, and every upstream failure the gateway maps to an error code.
 */
import { describe, expect, it } from 'vitest';
import {
  KycUserDocument,
  TransactionDocument,
  TransactionsDocument,
  VerifyTransactionDocument,
} from '../../src/client/generated/graphql.ts';
import { advanceWallClock } from '../helpers/clock.ts';
import { kycBody, transactionBody } from '../helpers/fixture.ts';
import { byRef, setup } from '../helpers/fixture-gateway.ts';
import { codesOf, dataOf, gql, KYC_SECRET, KYC_SLUG, PAYMENT_TOKEN } from '../helpers/gateway.ts';

describe('requests the upstreams receive', () => {
  it('payment: a path prefix and trailing slash in the base URL, the bearer token, no body', async () => {
    const { payment, gateway, token } = await setup(byRef, { paymentPath: '/gw-prefix/' });
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-abc123' }, token));
    expect(payment.requests).toHaveLength(1);
    const [request] = payment.requests;
    expect(request?.method).toBe('GET');
    expect(request?.path).toBe('/gw-prefix/pg/api/v1/transaction/status/NT-abc123');
    expect([...(request?.query.keys() ?? [])]).toEqual([]);
    expect(request?.headers.authorization).toBe(`Bearer ${PAYMENT_TOKEN}`);
    expect(request?.headers['x-secret-key']).toBeUndefined();
    expect(request?.body).toBe('');
    expect(request?.headers['content-length'] ?? '0').toBe('0');
  });

  it('KYC: userRef and slug in the query, encoded, the secret header, no body', async () => {
    const userRef = 'user+1@example.com&slug=evil #x';
    const { kyc, gateway, token } = await setup(byRef, {
      kyc: () => ({ body: kycBody({ userRef }) }),
    });
    const data = dataOf(await gql(gateway, KycUserDocument, { userRef }, token));
    expect(data.kycUser?.userRef).toBe(userRef);
    expect(kyc.requests).toHaveLength(1);
    const [request] = kyc.requests;
    expect(request?.method).toBe('GET');
    expect(request?.path).toBe('/api/v1/user/kyc');
    expect(request?.query.getAll('userRef')).toEqual([userRef]);
    expect(request?.query.getAll('slug')).toEqual([KYC_SLUG]);
    expect([...(request?.query.keys() ?? [])].sort()).toEqual(['slug', 'userRef']);
    expect(request?.headers['x-secret-key']).toBe(KYC_SECRET);
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.body).toBe('');
  });
});

describe('batching and limits', () => {
  it('20 references with 5 duplicates cost 15 upstream calls, answered in order', async () => {
    const { payment, gateway, token } = await setup(byRef);
    const unique = Array.from({ length: 15 }, (_, i) => `NT-B${i}`);
    const txRefs = [...unique, ...unique.slice(0, 5)];
    const data = dataOf(await gql(gateway, TransactionsDocument, { txRefs }, token));
    expect(data.transactions.map((tx) => tx?.txRef)).toEqual(txRefs);
    expect(payment.requests).toHaveLength(15);
  });

  it('accepts 100 entries and refuses 101 with no upstream call', async () => {
    const { payment, gateway, token } = await setup(byRef);
    const many = Array.from({ length: 101 }, (_, i) => `NT-M${i % 3}`);
    const refused = await gql(gateway, TransactionsDocument, { txRefs: many }, token);
    expect(codesOf(refused)).toEqual(['BAD_USER_INPUT']);
    expect(refused.data).toBeNull();
    expect(payment.requests).toHaveLength(0);
    const accepted = await gql(
      gateway,
      TransactionsDocument,
      { txRefs: many.slice(0, 100) },
      token,
    );
    expect(dataOf(accepted).transactions).toHaveLength(100);
    expect(payment.requests).toHaveLength(3);
  });

  it('one malformed reference fails the whole field with no upstream call', async () => {
    const { payment, gateway, token } = await setup(byRef);
    const response = await gql(
      gateway,
      TransactionsDocument,
      { txRefs: ['NT-OK1', 'NT-bad-ref', 'NT-OK2'] },
      token,
    );
    expect(codesOf(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors?.[0]?.message).toContain('txRefs[1]');
    expect(payment.requests).toHaveLength(0);
  });
});

describe('cache', () => {
  it('answers a final transaction from the cache; verifyTransaction always calls', async () => {
    const { payment, gateway, token } = await setup(byRef);
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-C1' }, token));
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-C1' }, token));
    expect(payment.requests).toHaveLength(1);
    dataOf(await gql(gateway, VerifyTransactionDocument, { txRef: 'NT-C1' }, token));
    dataOf(await gql(gateway, VerifyTransactionDocument, { txRef: 'NT-C1' }, token));
    expect(payment.requests).toHaveLength(3);
  });

  it('keeps a pending transaction only for the short TTL', async () => {
    const { payment, gateway, token } = await setup(
      () => ({ body: transactionBody({ txStatus: 'PENDING', txIsSucces: false }) }),
      { env: { CACHE_TTL_PENDING_SECONDS: '1' } },
    );
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-P1' }, token));
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-P1' }, token));
    expect(payment.requests).toHaveLength(1);
    advanceWallClock(1100);
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-P1' }, token));
    expect(payment.requests).toHaveLength(2);
  });

  it('never caches an error, and remembers an unknown reference only briefly', async () => {
    let fail = true;
    const { payment, gateway, token } = await setup((request) =>
      request.path.endsWith('NT-GONE1')
        ? { status: 404, body: { message: 'Transaction not found', error: true } }
        : fail
          ? { status: 500, body: { error: true } }
          : byRef(request, 0),
    );
    expect(codesOf(await gql(gateway, TransactionDocument, { txRef: 'NT-E1' }, token))).toEqual([
      'UPSTREAM_UNAVAILABLE',
    ]);
    fail = false;
    const data = dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-E1' }, token));
    expect(data.transaction?.txRef).toBe('NT-E1');
    expect(payment.requests).toHaveLength(2);
    for (let i = 0; i < 2; i++) {
      expect(
        dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-GONE1' }, token)).transaction,
      ).toBeNull();
    }
    // The second ask is answered from the brief memory of unknown references.
    expect(payment.requests).toHaveLength(3);
  });

  it('is bounded: the least recently used record leaves first', async () => {
    const { payment, gateway, token } = await setup(byRef, { env: { CACHE_MAX_ENTRIES: '2' } });
    for (const txRef of ['NT-L1', 'NT-L2', 'NT-L3', 'NT-L3', 'NT-L2']) {
      dataOf(await gql(gateway, TransactionDocument, { txRef }, token));
    }
    expect(payment.requests).toHaveLength(3);
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-L1' }, token));
    expect(payment.requests).toHaveLength(4);
  });

  it('is bounded in bytes: past the bound the oldest records leave, the newest stay', async () => {
    // 64 KiB (the least the setting takes) holds a few dozen of these records (about 1.4 KB each).
    const { payment, gateway, token } = await setup(byRef, { env: { CACHE_MAX_BYTES: '65536' } });
    const refs = Array.from({ length: 100 }, (_, i) => `NT-B${i}`);
    for (const txRef of refs) dataOf(await gql(gateway, TransactionDocument, { txRef }, token));
    expect(payment.requests).toHaveLength(100);
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-B99' }, token));
    expect(payment.requests).toHaveLength(100);
    dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-B0' }, token));
    expect(payment.requests).toHaveLength(101);
  });

  it('serves a record larger than the whole byte bound without keeping it', async () => {
    // A 100 KB message: more than the 64 KiB bound by itself, so it cannot be cached at all.
    const huge = (request: { path: string }) => ({
      body: transactionBody({
        paymentRef: request.path.split('/').pop(),
        message: 'x'.repeat(100_000),
      }),
    });
    const { payment, gateway, token } = await setup(huge, { env: { CACHE_MAX_BYTES: '65536' } });
    for (let i = 1; i <= 2; i++) {
      const data = dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-BIG1' }, token));
      expect(data.transaction?.txRef).toBe('NT-BIG1');
      expect(payment.requests).toHaveLength(i);
    }
    // A record that fits is still kept beside it.
    const small = await setup(byRef, { env: { CACHE_MAX_BYTES: '65536' } });
    for (let i = 0; i < 2; i++) {
      dataOf(await gql(small.gateway, TransactionDocument, { txRef: 'NT-SMALL1' }, small.token));
    }
    expect(small.payment.requests).toHaveLength(1);
  });

  it('concurrent misses for one reference, across requests, make one upstream call', async () => {
    const { payment, gateway, token } = await setup((request) => ({
      ...byRef(request, 0),
      delayMs: 300,
    }));
    const responses = await Promise.all(
      Array.from({ length: 500 }, () =>
        gql(gateway, TransactionDocument, { txRef: 'NT-HOT1' }, token),
      ),
    );
    for (const response of responses) expect(dataOf(response).transaction?.txRef).toBe('NT-HOT1');
    expect(payment.requests).toHaveLength(1);
  });
});

describe('upstream failures', () => {
  it('retries a 503 and returns the record after two calls', async () => {
    const { payment, gateway, token } = await setup((request, index) =>
      index === 0 ? { status: 503, body: 'busy' } : byRef(request, index),
    );
    const data = dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-R1' }, token));
    expect(data.transaction?.txRef).toBe('NT-R1');
    expect(payment.requests).toHaveLength(2);
  });

  it('ends at once when Retry-After does not fit the budget, and says when to retry', async () => {
    const { payment, gateway, token } = await setup(() => ({
      status: 429,
      headers: { 'retry-after': '30' },
      body: { message: 'slow down' },
    }));
    const started = performance.now();
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-RL1' }, token);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(codesOf(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(response.errors?.[0]?.extensions?.retryAfter).toBe(30);
    expect(payment.requests).toHaveLength(1);
  });

  it('honours a short Retry-After and then returns the record', async () => {
    const { payment, gateway, token } = await setup(
      (request, index) =>
        index === 0 ? { status: 429, headers: { 'retry-after': '1' } } : byRef(request, index),
      { env: { UPSTREAM_TIMEOUT_MS: '3000' } },
    );
    const started = performance.now();
    const data = dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-RL2' }, token));
    expect(data.transaction?.txRef).toBe('NT-RL2');
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(payment.requests).toHaveLength(2);
  });

  it('gives up on a persistent 502 after the configured attempts', async () => {
    const { payment, gateway, token } = await setup(() => ({
      status: 502,
      body: '<html>bad gateway</html>',
    }));
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-G1' }, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(payment.requests).toHaveLength(3);
  });

  it('does not retry a 500', async () => {
    const { payment, gateway, token } = await setup(() => ({ status: 500, body: { error: true } }));
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-F1' }, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(payment.requests).toHaveLength(1);
  });

  it('answers UPSTREAM_TIMEOUT at the budget when the upstream is slow, not when it answers', async () => {
    // The upstream would answer after 30 s: an answer long before that is the budget's, however
    // slowly a busy machine runs, and none comes before the budget (timers never fire early).
    const { gateway, token } = await setup(
      (request) => ({ ...byRef(request, 0), delayMs: 30_000 }),
      { env: { UPSTREAM_TIMEOUT_MS: '400' } },
    );
    const started = performance.now();
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-SLOW1' }, token);
    const elapsed = performance.now() - started;
    expect(codesOf(response)).toEqual(['UPSTREAM_TIMEOUT']);
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(15_000);
  });

  it('maps a reset connection to UPSTREAM_UNAVAILABLE after retries', async () => {
    const { payment, gateway, token } = await setup(() => ({ reset: true }));
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-RST1' }, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(payment.requests).toHaveLength(3);
  });

  it('maps a refused connection to UPSTREAM_UNAVAILABLE', async () => {
    const { payment, gateway, token } = await setup(byRef);
    await payment.close();
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-DOWN1' }, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });

  it.each([
    ['a body that is not JSON', { body: '<html>oops</html>' }],
    ['JSON of the wrong shape', { body: { data: { amount: 'lots', txStatus: 'SUCCESSFUL' } } }],
    ['no data object', { body: { event: 'X' } }],
    ['a txStatus that is not a string', { body: transactionBody({ txStatus: 7 }) }],
    ['an unexpected 400', { status: 400, body: { message: 'bad' } }],
  ])('maps %s to UPSTREAM_BAD_RESPONSE', async (_, answer) => {
    const { gateway, token } = await setup(() => answer);
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-X1' }, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
    expect(response.data?.transaction).toBeNull();
  });

  it('reads an answer that arrives in many chunks whole', async () => {
    const message = 'é'.repeat(150_000); // 300 KB of UTF-8, two-byte characters across chunks
    const { gateway, token } = await setup(() => ({ body: transactionBody({ message }) }));
    const data = dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-LONG1' }, token));
    expect(data.transaction?.message).toBe(message);
  });

  it('refuses an answer over 2 MB as UPSTREAM_BAD_RESPONSE, without a retry, and serves others', async () => {
    const huge = transactionBody({ message: 'x'.repeat(3 * 1024 * 1024) });
    const { payment, gateway, token } = await setup((request) =>
      request.path.endsWith('/NT-HUGE1') ? { body: huge } : byRef(request, 0),
    );
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-HUGE1' }, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
    expect(response.errors?.[0]?.message).toMatch(/too large/);
    expect(payment.requests).toHaveLength(1);
    const next = dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-OK1' }, token));
    expect(next.transaction?.txRef).toBe('NT-OK1');
  });

  it.each([401, 403])('maps %s to UPSTREAM_AUTH_FAILED', async (status) => {
    const { gateway, token } = await setup(() => ({ status, body: { message: 'no' } }));
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-A1' }, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_AUTH_FAILED']);
  });

  it('never repeats an upstream body, URL or credential in an error', async () => {
    const { payment, gateway, token } = await setup((request) => ({
      status: 500,
      body: { echo: request.headers, url: request.path },
    }));
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-ECHO1' }, token);
    const text = JSON.stringify(response);
    expect(codesOf(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(text).not.toContain(PAYMENT_TOKEN);
    expect(text).not.toContain(payment.url);
    expect(text).not.toContain('127.0.0.1');
    expect(text).not.toContain('/pg/api');
  });
});

describe('record contents', () => {
  it('an unreadable time is null with an error on that field only', async () => {
    const { gateway, token } = await setup(() => ({
      body: transactionBody({ txTimestamp: 'yesterday-ish' }),
    }));
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-T1' }, token);
    expect(response.data?.transaction?.timestamp).toBeNull();
    expect(response.data?.transaction?.amount).toBe(1000.5);
    expect(response.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([
      [['transaction', 'timestamp'], 'UPSTREAM_BAD_RESPONSE'],
    ]);
  });

  it('reads upstream times in UPSTREAM_TIME_ZONE', async () => {
    const { gateway, token } = await setup(byRef, { env: { UPSTREAM_TIME_ZONE: 'Africa/Lagos' } });
    const data = dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-TZ1' }, token));
    expect(data.transaction?.timestamp).toBe('2024-01-05T14:04:05.000Z');
  });

  it('never returns more than six leading and four trailing card digits', async () => {
    const pan = '5399838383838381';
    const { gateway, token } = await setup(() => ({
      body: transactionBody({
        card: { first: pan, last: pan, expiry: '09/28', cardType: 'MC', number: pan },
      }),
    }));
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-PAN1' }, token);
    expect(dataOf(response).transaction?.card).toMatchObject({ first6: '539983', last4: '8381' });
    expect(JSON.stringify(response)).not.toContain(pan);
  });

  it('a missing currency makes that record an UPSTREAM_BAD_RESPONSE', async () => {
    const { gateway, token } = await setup(() => ({ body: transactionBody({ currency: null }) }));
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-CUR1' }, token);
    expect(response.data?.transaction).toBeNull();
    expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
  });

  it('a KYC envelope that says "not found" is null; another error is UPSTREAM_BAD_RESPONSE', async () => {
    const { gateway, token } = await setup(byRef, {
      kyc: (request) =>
        request.query.get('userRef') === 'ghost'
          ? { body: { error: true, message: 'User not found', data: null } }
          : { body: { error: true, message: 'Internal failure', data: null } },
    });
    expect(
      dataOf(await gql(gateway, KycUserDocument, { userRef: 'ghost' }, token)).kycUser,
    ).toBeNull();
    const other = await gql(gateway, KycUserDocument, { userRef: 'someone' }, token);
    expect(codesOf(other)).toEqual(['UPSTREAM_BAD_RESPONSE']);
  });

  it('a KYC user without a current level object has currentLevel null', async () => {
    const { gateway, token } = await setup(byRef, { kyc: () => ({ body: kycBody({ level: 0 }) }) });
    const data = dataOf(await gql(gateway, KycUserDocument, { userRef: 'user-1' }, token));
    expect(data.kycUser?.level).toBe(0);
    expect(data.kycUser?.currentLevel).toBeNull();
  });
});
