/**
 * The gateway against the built-in sandbox, over real HTTP: every root field with the demo
 * references, the way `npm start` serves them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../sandbox/index.ts';
import {
  KycSdkConfigDocument,
  KycUserDocument,
  RefreshKycUserDocument,
  TransactionDocument,
  TransactionsDocument,
  VerifyTransactionDocument,
} from '../../src/client/generated/graphql.ts';
import { advanceWallClock } from '../helpers/clock.ts';
import { codesOf, dataOf, gql, startSandboxGateway, type TestGateway } from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
let token: string;

let close: () => Promise<void>;
beforeAll(async () => {
  ({ sandbox, gateway, token, close } = await startSandboxGateway(
    { UPSTREAM_TIMEOUT_MS: '1000' },
    { pendingSeconds: 1, slowMs: 3000 },
  ));
});
afterAll(() => close());

describe('transaction', () => {
  it('maps every field of a successful card payment', async () => {
    const data = dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token));
    expect(data.transaction).toEqual({
      txRef: 'NT-SUCCESS001',
      event: 'PAYMENT_SUCCESSFUL',
      status: 'SUCCESSFUL',
      rawStatus: 'SUCCESSFUL',
      succeeded: true,
      amount: 15000.5,
      appFee: 225.01,
      merchantFee: 75.25,
      currency: 'NGN',
      checkoutPoint: expect.stringMatching(/^https:\/\//),
      paymentRef: expect.any(String),
      merchantRef: expect.any(String),
      paymentChannel: 'Card',
      deviceFingerprint: expect.any(String),
      message: expect.any(String),
      timestamp: '2024-01-05T15:04:05.000Z',
      customer: {
        fullName: 'Adaeze Okafor',
        email: 'adaeze.okafor@example.com',
        phone: '2348012345678',
        joinedAt: '2023-03-14T09:26:53.000Z',
      },
      card: {
        first6: '411111',
        last4: '1111',
        expiry: '12/27',
        expiryMonth: 12,
        expiryYear: 2027,
        cardType: 'Visa',
        masked: '411111******1111',
      },
    });
  });

  it('reports a failed payment as FAILED and not succeeded', async () => {
    const { transaction } = dataOf(
      await gql(gateway, TransactionDocument, { txRef: 'NT-FAILED001' }, token),
    );
    expect(transaction).toMatchObject({
      status: 'FAILED',
      rawStatus: 'FAILED',
      event: 'PAYMENT_FAILED',
      succeeded: false,
      timestamp: '2024-02-29T23:59:59.000Z',
    });
  });

  it('reads a time written with a narrow no-break space before PM', async () => {
    const { transaction } = dataOf(
      await gql(gateway, TransactionDocument, { txRef: 'NT-USD001' }, token),
    );
    expect(transaction?.currency).toBe('USD');
    expect(transaction?.amount).toBe(19.99);
    expect(transaction?.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T13:02:03\.000Z$/);
  });

  it('returns null customer and card when the upstream sends none', async () => {
    const { transaction } = dataOf(
      await gql(gateway, TransactionDocument, { txRef: 'NT-NOCARD001' }, token),
    );
    expect(transaction).toMatchObject({
      paymentChannel: 'BankTransfer',
      customer: null,
      card: null,
    });
    expect(transaction?.timestamp).toBe('2023-12-31T00:30:00.000Z');
  });

  it('keeps an unknown upstream status as UNKNOWN with the raw value', async () => {
    const { transaction } = dataOf(
      await gql(gateway, TransactionDocument, { txRef: 'NT-ODDSTATUS001' }, token),
    );
    expect(transaction).toMatchObject({ status: 'UNKNOWN', rawStatus: 'REVERSED' });
  });

  it('accepts amounts sent as numeric strings', async () => {
    const { transaction } = dataOf(
      await gql(gateway, TransactionDocument, { txRef: 'NT-STRINGS001' }, token),
    );
    expect(transaction).toMatchObject({ amount: 2500, appFee: 37.5, merchantFee: 12.49 });
  });

  it('answers null, without error, for an unknown reference', async () => {
    const data = dataOf(await gql(gateway, TransactionDocument, { txRef: 'NT-NOSUCHREF9' }, token));
    expect(data.transaction).toBeNull();
  });

  it('refuses a malformed reference before any upstream call', async () => {
    const before = sandbox.requests.length;
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-../../admin' }, token);
    expect(codesOf(response)).toEqual(['BAD_USER_INPUT']);
    expect(sandbox.requests.length).toBe(before);
  });
});

describe('transactions', () => {
  it('answers in order, null for unknown, errors only at failing positions', async () => {
    const response = await gql(
      gateway,
      TransactionsDocument,
      {
        txRefs: ['NT-FAILED001', 'NT-UNKNOWN77', 'NT-ERROR500', 'NT-SUCCESS001', 'NT-BADSHAPE001'],
      },
      token,
    );
    expect(response.data?.transactions.map((tx) => tx?.txRef ?? null)).toEqual([
      'NT-FAILED001',
      null,
      null,
      'NT-SUCCESS001',
      null,
    ]);
    const byPosition = Object.fromEntries(
      (response.errors ?? []).map((error) => [String(error.path?.[1]), error.extensions?.code]),
    );
    expect(byPosition).toEqual({ '2': 'UPSTREAM_UNAVAILABLE', '4': 'UPSTREAM_BAD_RESPONSE' });
  });
});

describe('verifyTransaction', () => {
  it('follows a pending payment to success, always asking the upstream', async () => {
    const txRef = `NT-PENDING${Date.now()}`;
    const first = dataOf(await gql(gateway, VerifyTransactionDocument, { txRef }, token));
    expect(first.verifyTransaction).toMatchObject({ status: 'PENDING', succeeded: false });
    advanceWallClock(1100);
    const calls = () => sandbox.requests.filter((r) => r.path.endsWith(`/${txRef}`)).length;
    const before = calls();
    const second = dataOf(await gql(gateway, VerifyTransactionDocument, { txRef }, token));
    expect(second.verifyTransaction).toMatchObject({ status: 'SUCCESSFUL', succeeded: true });
    expect(calls()).toBe(before + 1);
    // The mutation wrote the cache: the query now answers without an upstream call.
    const third = dataOf(await gql(gateway, TransactionDocument, { txRef }, token));
    expect(third.transaction?.status).toBe('SUCCESSFUL');
    expect(calls()).toBe(before + 1);
  });
});

describe('KYC', () => {
  it('maps a user with levels and checks, and the current level', async () => {
    const { kycUser } = dataOf(
      await gql(gateway, KycUserDocument, { userRef: 'usr_demo_tier1' }, token),
    );
    expect(kycUser).toMatchObject({ userRef: 'usr_demo_tier1', verified: false, level: 1 });
    expect(kycUser?.levels.map((l) => [l.level, l.slug, l.verified])).toEqual([
      [1, 'tier_1', true],
      [2, 'tier_2', false],
      [3, 'tier_3', false],
    ]);
    expect(kycUser?.currentLevel?.slug).toBe('tier_1');
    const gender = kycUser?.currentLevel?.checks.find((c) => c.name === 'gender');
    expect(gender).toMatchObject({ passed: true, query: { gender: 'female' }, result: {} });
    expect(gender?.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
  });

  it('answers null for an unknown user, by 404 or by a "does not exist" envelope', async () => {
    for (const userRef of ['usr_nobody_here', 'usr_kyc_gone']) {
      const data = dataOf(await gql(gateway, KycUserDocument, { userRef }, token));
      expect(data.kycUser).toBeNull();
    }
  });

  it('turns any other error envelope into UPSTREAM_BAD_RESPONSE', async () => {
    const response = await gql(gateway, KycUserDocument, { userRef: 'usr_kyc_envelope' }, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
    expect(response.errors?.[0]?.message).toMatch(/KYC service/);
  });

  it('refreshKycUser sees a level recorded after the first read', async () => {
    const userRef = `usr_flow_${Date.now()}`;
    sandbox.kyc.recordLevel(userRef, 'tier_1', [{ name: 'gender', query: { gender: 'male' } }], {
      name: 'Flow User',
    });
    const first = dataOf(await gql(gateway, KycUserDocument, { userRef }, token));
    expect(first.kycUser?.level).toBe(1);
    sandbox.kyc.recordLevel(userRef, 'tier_2', [{ name: 'bvn', query: { bvn: '0000' } }]);
    const cached = dataOf(await gql(gateway, KycUserDocument, { userRef }, token));
    expect(cached.kycUser?.level).toBe(1);
    const fresh = dataOf(await gql(gateway, RefreshKycUserDocument, { userRef }, token));
    expect(fresh.refreshKycUser?.level).toBe(2);
    expect(fresh.refreshKycUser?.currentLevel?.slug).toBe('tier_2');
  });

  it('kycSdkConfig gives public values only', async () => {
    const { kycSdkConfig } = dataOf(
      await gql(
        gateway,
        KycSdkConfigDocument,
        { userRef: 'usr_demo_new', name: 'Ngozi', levelSlug: 'tier_1' },
        token,
      ),
    );
    expect(kycSdkConfig).toEqual({
      scriptUrl: sandbox.sdkScriptUrl,
      publicKey: sandbox.credentials.kycPublicKey,
      slug: sandbox.credentials.kycBusinessSlug,
      userRef: 'usr_demo_new',
      name: 'Ngozi',
      levelSlug: 'tier_1',
    });
    expect(JSON.stringify(kycSdkConfig)).not.toContain(sandbox.credentials.kycSecretKey);
  });

  it('kycSdkConfig refuses a level slug not of the form tier_<n>', async () => {
    const response = await gql(
      gateway,
      KycSdkConfigDocument,
      { userRef: 'usr_demo_new', name: 'Ngozi', levelSlug: 'gold' },
      token,
    );
    expect(codesOf(response)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('upstream requests', () => {
  it('sends exactly the documented path, query and credentials', async () => {
    const userRef = 'usr_demo_tier3';
    sandbox.requests.length = 0;
    dataOf(await gql(gateway, VerifyTransactionDocument, { txRef: 'NT-USD001' }, token));
    dataOf(await gql(gateway, RefreshKycUserDocument, { userRef }, token));
    const [payment, kyc] = sandbox.requests;
    expect(payment).toMatchObject({
      service: 'payment',
      method: 'GET',
      path: '/pg/api/v1/transaction/status/NT-USD001',
      body: '',
    });
    expect(payment?.headers.authorization).toBe(`Bearer ${sandbox.credentials.paymentAccessToken}`);
    expect(payment?.headers['x-secret-key']).toBeUndefined();
    expect(kyc).toMatchObject({
      service: 'kyc',
      method: 'GET',
      path: '/api/v1/user/kyc',
      query: { userRef, slug: sandbox.credentials.kycBusinessSlug },
      body: '',
    });
    expect(kyc?.headers['x-secret-key']).toBe(sandbox.credentials.kycSecretKey);
    expect(kyc?.headers.authorization).toBeUndefined();
    expect(sandbox.requests).toHaveLength(2);
  });
});
