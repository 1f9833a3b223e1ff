/**
 * A sandbox serving several businesses, through real HTTP on loopback: the same references
 * answer each business's own data, a credential names its business and no other, each business
 * keeps its own state, and notifications go to each business's own path, signed with its secret.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  parseSignatureHeader,
  SIGNATURE_HEADER,
  signatureMatches,
} from '../../src/webhooks/signature.ts';
import { until } from '../../test/helpers/eventually.ts';
import { describeSandbox, type Sandbox, startSandbox } from '../index.ts';

const A = {
  id: 'shop-a',
  paymentAccessToken: 'token-of-shop-a',
  kycSecretKey: 'sk-of-shop-a',
  kycPublicKey: 'pk-of-shop-a',
  kycBusinessSlug: 'shop-a-slug',
};
const B = {
  id: 'shop_b',
  paymentAccessToken: 'token-of-shop-b',
  kycSecretKey: 'sk-of-shop-b',
  kycPublicKey: 'pk-of-shop-b',
  kycBusinessSlug: 'shop-b-slug',
};
const C = {
  id: 'shop-c',
  paymentAccessToken: 'token-of-shop-c',
  kycSecretKey: 'sk-of-shop-c',
  kycPublicKey: 'pk-of-shop-c',
  kycBusinessSlug: 'shop-c-slug',
};
const PENDING_SECONDS = 8;

type Json = Record<string, unknown>;

let clock = Date.parse('2025-03-01T10:00:00Z');
let sandbox: Sandbox;
let single: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({
    businesses: [A, B],
    pendingSeconds: PENDING_SECONDS,
    slowMs: 50,
    now: () => clock,
  });
  single = await startSandbox({
    paymentAccessToken: 'single-token',
    kycSecretKey: 'single-secret',
    kycBusinessSlug: 'single-slug',
    now: () => clock,
  });
});

afterAll(async () => {
  await Promise.all([sandbox.close(), single.close()]);
});

async function pay(
  on: Sandbox,
  token: string,
  txRef: string,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${on.paymentUrl}/pg/api/v1/transaction/status/${txRef}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function kyc(
  on: Sandbox,
  secret: string,
  slug: string,
  userRef: string,
): Promise<{ status: number; body: Json }> {
  const query = new URLSearchParams({ userRef, slug });
  const response = await fetch(`${on.kycUrl}/api/v1/user/kyc?${query}`, {
    headers: { 'x-secret-key': secret },
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function widget(
  on: Sandbox,
  path: 'session' | 'verify',
  publicKey: string,
  body: Json,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${on.kycUrl}/sdk/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-public-key': publicKey },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const dataOf = (body: Json): Json => body.data as Json;
const customerOf = (body: Json): Json => dataOf(body).customer as Json;

describe('the same references under two businesses', () => {
  it('the first business answers the documented data, the second its own', async () => {
    const documented = await pay(single, 'single-token', 'NT-SUCCESS001');
    const first = await pay(sandbox, A.paymentAccessToken, 'NT-SUCCESS001');
    const second = await pay(sandbox, B.paymentAccessToken, 'NT-SUCCESS001');
    expect([documented.status, first.status, second.status]).toEqual([200, 200, 200]);
    expect(first.body).toEqual(documented.body);

    expect(customerOf(second.body).fullname).not.toBe(customerOf(first.body).fullname);
    expect(customerOf(second.body).email).not.toBe(customerOf(first.body).email);
    expect(customerOf(second.body).phone).not.toBe(customerOf(first.body).phone);
    expect(dataOf(second.body)).toMatchObject({
      amount: 16000.5,
      merchantRef: 'ORDER-1001-SHOP_B',
      txStatus: 'SUCCESSFUL',
      appFee: dataOf(first.body).appFee,
      card: dataOf(first.body).card,
      txTimestamp: dataOf(first.body).txTimestamp,
    });
  });

  it('every demo reference differs, keeps its form, and is the same on every run', async () => {
    const again = await startSandbox({ businesses: [A, B], slowMs: 50 });
    try {
      for (const txRef of [
        'NT-FAILED001',
        'NT-NOCARD001',
        'NT-ODDSTATUS001',
        'NT-STRINGS001',
        'NT-USD001',
        'NT-GEN42',
        'NT-SLOW001',
        'NT-FLAKYX',
      ]) {
        // A flaky reference fails once per business: the first answer of each is the 503.
        if (txRef === 'NT-FLAKYX') {
          expect((await pay(sandbox, A.paymentAccessToken, txRef)).status).toBe(503);
          expect((await pay(sandbox, B.paymentAccessToken, txRef)).status).toBe(503);
          expect((await pay(again, B.paymentAccessToken, txRef)).status).toBe(503);
        }
        const first = await pay(sandbox, A.paymentAccessToken, txRef);
        const second = await pay(sandbox, B.paymentAccessToken, txRef);
        const secondAgain = await pay(again, B.paymentAccessToken, txRef);
        expect([first.status, second.status], txRef).toEqual([200, 200]);
        expect(dataOf(second.body).amount, txRef).not.toEqual(dataOf(first.body).amount);
        expect(dataOf(second.body).merchantRef, txRef).not.toEqual(dataOf(first.body).merchantRef);
        expect(dataOf(second.body).txStatus, txRef).toEqual(dataOf(first.body).txStatus);
        expect(secondAgain.body, txRef).toEqual(second.body);
      }
    } finally {
      await again.close();
    }
    const strings = await pay(sandbox, B.paymentAccessToken, 'NT-STRINGS001');
    expect(dataOf(strings.body).amount).toBe('3500.00');
    const noCard = await pay(sandbox, B.paymentAccessToken, 'NT-NOCARD001');
    expect(Object.keys(dataOf(noCard.body))).not.toContain('customer');
  });

  it('the failure references fail the same under every business', async () => {
    for (const business of [A, B]) {
      expect((await pay(sandbox, business.paymentAccessToken, 'NT-ERROR500')).status).toBe(500);
      expect((await pay(sandbox, business.paymentAccessToken, 'NT-UNAUTH001')).status).toBe(401);
      expect((await pay(sandbox, business.paymentAccessToken, 'NT-UNKNOWN1')).status).toBe(404);
    }
  });

  it('a demo KYC user has the same levels under another name', async () => {
    const first = await kyc(sandbox, A.kycSecretKey, A.kycBusinessSlug, 'usr_demo_tier3');
    const second = await kyc(sandbox, B.kycSecretKey, B.kycBusinessSlug, 'usr_demo_tier3');
    const documented = await kyc(single, 'single-secret', 'single-slug', 'usr_demo_tier3');
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.body).toEqual(documented.body);
    const [one, two] = [dataOf(first.body), dataOf(second.body)];
    expect(two.name).not.toBe(one.name);
    expect(two.level).toBe(one.level);
    expect(two.status).toBe(one.status);
    const slow = await kyc(sandbox, B.kycSecretKey, B.kycBusinessSlug, 'usr_kyc_slow');
    const tier1 = await kyc(sandbox, B.kycSecretKey, B.kycBusinessSlug, 'usr_demo_tier1');
    expect(dataOf(slow.body).levels).toEqual(dataOf(tier1.body).levels);
  });
});

describe('a credential names its business and no other', () => {
  it('the payment interface refuses a token of no business', async () => {
    for (const token of ['token-of-shop-c', 'single-token', `${A.paymentAccessToken}x`]) {
      const { status, body } = await pay(sandbox, token, 'NT-SUCCESS001');
      expect(status).toBe(401);
      expect(JSON.stringify(body)).not.toContain(token);
    }
  });

  it("the KYC interface refuses a key of no business, and a business's key with another's slug", async () => {
    expect((await kyc(sandbox, 'sk-of-shop-c', A.kycBusinessSlug, 'usr_demo_new')).status).toBe(
      401,
    );
    for (const [key, slug] of [
      [A.kycSecretKey, B.kycBusinessSlug],
      [B.kycSecretKey, A.kycBusinessSlug],
    ] as const) {
      const refused = await kyc(sandbox, key, slug, 'usr_demo_new');
      expect(refused).toEqual({
        status: 400,
        body: { message: 'Invalid business slug', error: true, data: null },
      });
    }
    expect((await kyc(sandbox, B.kycSecretKey, B.kycBusinessSlug, 'usr_demo_new')).status).toBe(
      200,
    );
  });

  it("the widget refuses a business's public key with another's slug", async () => {
    const start = { userRef: 'usr_w', name: 'Ada Obi', levelSlug: 'tier_1' };
    const refused = await widget(sandbox, 'session', A.kycPublicKey, {
      ...start,
      slug: B.kycBusinessSlug,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('INVALID_SLUG');
    const unknown = await widget(sandbox, 'session', 'pk-of-shop-c', {
      ...start,
      slug: A.kycBusinessSlug,
    });
    expect(unknown.body.code).toBe('INVALID_PUBLIC_KEY');
    const opened = await widget(sandbox, 'session', B.kycPublicKey, {
      ...start,
      slug: B.kycBusinessSlug,
    });
    expect(opened.status).toBe(200);
    expect(dataOf(opened.body).business).toBe(B.kycBusinessSlug);
  });
});

describe('each business keeps its own state', () => {
  it('a user verified under one business is not seen under the other', async () => {
    const verified = await widget(sandbox, 'verify', A.kycPublicKey, {
      slug: A.kycBusinessSlug,
      userRef: 'usr_only_a',
      name: 'Ada Obi',
      levelSlug: 'tier_1',
      answers: { gender: 'female', name: 'Ada Obi' },
    });
    expect(verified.status).toBe(200);
    const underA = await kyc(sandbox, A.kycSecretKey, A.kycBusinessSlug, 'usr_only_a');
    expect(underA.status).toBe(200);
    expect(dataOf(underA.body).level).toBe(1);
    expect((await kyc(sandbox, B.kycSecretKey, B.kycBusinessSlug, 'usr_only_a')).status).toBe(404);

    const stores = sandbox.businesses?.map((b) => b.kyc);
    expect(stores?.[0]?.has('usr_only_a')).toBe(true);
    expect(stores?.[1]?.has('usr_only_a')).toBe(false);
    expect(sandbox.kyc).toBe(stores?.[0]);
  });

  it("a pending payment's clock starts at its business's first request", async () => {
    const txRef = 'NT-PENDINGOWNCLOCK';
    expect(dataOf((await pay(sandbox, A.paymentAccessToken, txRef)).body).txStatus).toBe('PENDING');
    clock += PENDING_SECONDS * 1000;
    expect(dataOf((await pay(sandbox, A.paymentAccessToken, txRef)).body).txStatus).toBe(
      'SUCCESSFUL',
    );
    expect(dataOf((await pay(sandbox, B.paymentAccessToken, txRef)).body).txStatus).toBe('PENDING');
  });
});

describe('startSandbox with businesses', () => {
  it('exposes each business, the first as `credentials`, and makes up what is not given', async () => {
    const made = await startSandbox({ businesses: [{ id: 'one' }, { id: 'two' }] });
    try {
      const [one, two] = made.businesses ?? [];
      expect(one?.id).toBe('one');
      expect(two?.id).toBe('two');
      expect(one?.credentials.kycBusinessSlug).toBe('one-business');
      expect(two?.credentials.kycBusinessSlug).toBe('two-business');
      expect(one?.supplied).toEqual({ paymentAccessToken: false, kycSecretKey: false });
      expect(made.credentials).toEqual(one?.credentials);
      expect(one?.credentials.paymentAccessToken).not.toBe(two?.credentials.paymentAccessToken);
      expect(one?.credentials.kycSecretKey).not.toBe(two?.credentials.kycSecretKey);
      expect(one?.credentials.kycPublicKey).not.toBe(two?.credentials.kycPublicKey);
      const token = two?.credentials.paymentAccessToken ?? '';
      expect((await pay(made, token, 'NT-SUCCESS001')).status).toBe(200);
    } finally {
      await made.close();
    }
    expect(single.businesses).toBeUndefined();
  });

  it('refuses businesses that cannot be told apart, naming the business and the setting only', async () => {
    const refusals: [Parameters<typeof startSandbox>[0], RegExp][] = [
      [{ businesses: [] }, /at least one business/],
      [{ businesses: [{ id: 'has space' }] }, /business 1: `id`/],
      [{ businesses: [{ id: 'x'.repeat(65) }] }, /business 1: `id`/],
      [{ businesses: [{ id: 'a' }, { id: 'a' }] }, /two businesses have the id "a"/],
      [
        {
          businesses: [
            { id: 'a', kycPublicKey: 'pk-same' },
            { id: 'b', kycPublicKey: 'pk-same' },
          ],
        },
        /businesses "a" and "b" have the same `kycPublicKey`/,
      ],
      [
        {
          businesses: [
            { id: 'a', kycBusinessSlug: 's' },
            { id: 'b', kycBusinessSlug: 's' },
          ],
        },
        /businesses "a" and "b" have the same `kycBusinessSlug`/,
      ],
      [{ businesses: [{ id: 'a', kycSecretKey: ' ' }] }, /business "a": `kycSecretKey` must be/],
      [
        { paymentAccessToken: 'top-level-token', businesses: [{ id: 'a' }] },
        /`paymentAccessToken` is set for each business/,
      ],
    ];
    for (const [options, message] of refusals) {
      const refused = await startSandbox(options).then(
        async (started) => {
          await started.close();
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(TypeError);
      expect(String(refused)).toMatch(message);
      expect(String(refused)).not.toMatch(/pk-same|top-level-token/);
    }
  });

  it('describeSandbox lists every business, its secrets per showCredentials', async () => {
    const made = await startSandbox({ businesses: [A, { id: 'made-up' }] });
    try {
      const generated = describeSandbox(made);
      const madeUp = made.businesses?.[1]?.credentials;
      expect(generated).toContain('Business shop-a');
      expect(generated).toContain('Business made-up');
      expect(generated).toContain(`kycBusinessSlug=${A.kycBusinessSlug}`);
      expect(generated).toContain('kycBusinessSlug=made-up-business');
      expect(generated).toContain(`kycPublicKey=${A.kycPublicKey}`);
      // Supplied secrets are the operator's: never echoed; made-up ones are shown.
      expect(generated).not.toContain(A.paymentAccessToken);
      expect(generated).not.toContain(A.kycSecretKey);
      expect(generated).toContain(madeUp?.paymentAccessToken ?? '?');
      expect(generated).toContain(madeUp?.kycSecretKey ?? '?');

      const all = describeSandbox(made, { showCredentials: 'all' });
      expect(all).toContain(A.paymentAccessToken);
      expect(all).toContain(A.kycSecretKey);

      const none = describeSandbox(made, { showCredentials: 'none' });
      expect(none).toContain('shop-a  slug shop-a-slug');
      expect(none).toContain('made-up  slug made-up-business');
      for (const secret of [
        A.paymentAccessToken,
        A.kycSecretKey,
        madeUp?.paymentAccessToken,
        madeUp?.kycSecretKey,
      ]) {
        expect(none).not.toContain(secret);
      }
    } finally {
      await made.close();
    }
  });
});

describe('notifications per business', () => {
  type Received = { path: string; body: string; signature: string | undefined };
  const received: Received[] = [];
  let receiver: Server;
  let baseUrl: string;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const signature = req.headers[SIGNATURE_HEADER];
        received.push({
          path: req.url ?? '',
          body: Buffer.concat(chunks).toString('utf8'),
          signature: typeof signature === 'string' ? signature : undefined,
        });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const address = receiver.address();
    if (address === null || typeof address !== 'object') throw new Error('no address');
    baseUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  const secrets = { 'shop-a': 'whsec-of-shop-a', shop_b: 'whsec-of-shop-b' };

  const signedBy = (message: Received, secret: string): boolean => {
    const header = parseSignatureHeader(message.signature);
    return header !== undefined && signatureMatches(header, Buffer.from(message.body), [secret]);
  };

  it("go to the business's own path, signed with its secret; a business without one gets none", async () => {
    received.length = 0;
    const pushing = await startSandbox({ businesses: [A, B, C], pendingSeconds: 0 });
    try {
      pushing.sendWebhooksTo({ baseUrl, businesses: secrets });
      // shop-c has no entry: its settlement and its user's checks are announced nowhere.
      await pay(pushing, C.paymentAccessToken, 'NT-PENDINGC1');
      pushing.businesses?.[2]?.kyc.recordLevel('usr_c', 'tier_1', [{ name: 'gender' }]);
      await pay(pushing, A.paymentAccessToken, 'NT-PENDINGA1');
      pushing.businesses?.[1]?.kyc.recordLevel('usr_b', 'tier_1', [{ name: 'gender' }]);
      await until(() => received.length >= 2 && pushing.webhooksSent.length >= 2, 5000);

      const byPath = new Map(received.map((r) => [r.path, r]));
      expect([...byPath.keys()].sort()).toEqual([
        '/webhooks/kyc/shop_b',
        '/webhooks/payment/shop-a',
      ]);
      const payment = byPath.get('/webhooks/payment/shop-a');
      const kycChange = byPath.get('/webhooks/kyc/shop_b');
      if (payment === undefined || kycChange === undefined) throw new Error('missing');
      expect(JSON.parse(payment.body)).toMatchObject({
        event: 'PAYMENT_SUCCESSFUL',
        data: { txRef: 'NT-PENDINGA1' },
      });
      expect(JSON.parse(kycChange.body)).toMatchObject({
        event: 'KYC_UPDATED',
        data: { userRef: 'usr_b' },
      });
      expect(signedBy(payment, secrets['shop-a'])).toBe(true);
      expect(signedBy(payment, secrets.shop_b)).toBe(false);
      expect(signedBy(kycChange, secrets.shop_b)).toBe(true);
      expect(signedBy(kycChange, secrets['shop-a'])).toBe(false);

      expect([...pushing.webhooksSent].sort((x, y) => x.path.localeCompare(y.path))).toEqual([
        { path: '/webhooks/kyc/shop_b', status: 202, business: 'shop_b' },
        { path: '/webhooks/payment/shop-a', status: 202, business: 'shop-a' },
      ]);
    } finally {
      await pushing.close();
    }
  });

  it("with one secret, only the first business's go to the paths without an id", async () => {
    received.length = 0;
    const pushing = await startSandbox({ businesses: [A, B], pendingSeconds: 0 });
    try {
      pushing.sendWebhooksTo({ baseUrl, secret: 'whsec-one' });
      pushing.businesses?.[1]?.kyc.recordLevel('usr_b', 'tier_1', [{ name: 'gender' }]);
      pushing.businesses?.[0]?.kyc.recordLevel('usr_a', 'tier_1', [{ name: 'gender' }]);
      await until(() => pushing.webhooksSent.length >= 1, 5000);
      expect(received.map((r) => [r.path, JSON.parse(r.body).data])).toEqual([
        ['/webhooks/kyc', { userRef: 'usr_a' }],
      ]);
      expect(received[0] && signedBy(received[0], 'whsec-one')).toBe(true);
    } finally {
      await pushing.close();
    }
  });

  it('refuses a target naming a business the sandbox does not serve, or an empty secret', () => {
    expect(() => sandbox.sendWebhooksTo({ baseUrl, businesses: { 'shop-z': 's' } })).toThrow(
      /serves no business "shop-z"/,
    );
    expect(() => sandbox.sendWebhooksTo({ baseUrl, businesses: { 'shop-a': '' } })).toThrow(
      /secret of business "shop-a" is empty/,
    );
    expect(() => single.sendWebhooksTo({ baseUrl, businesses: { 'shop-a': 's' } })).toThrow(
      /serves one business/,
    );
  });
});
