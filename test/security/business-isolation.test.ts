/**
 * Two businesses behind one gateway, tested as an attacker of the next tenant would: a real
 * sandbox serving businesses A and B (the same references and userRefs, each answering data of
 * its own), a real businesses file, and every transport spoken on the wire.
 *
 * What tells the answers apart: B's `merchantRef` ends with `-SHOP-B` and its customers and KYC
 * users have other names; A's `merchantRef` is the documented `ORDER-…` alone. A read of one
 * business that shows the other's marker is a leak, whichever read filled the cache first.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  A,
  B,
  B_MARKER,
  type BusinessesSetup,
  expectOwn,
  expectPendingThenSettled,
  kycCallsOf,
  paymentCallsOf,
  startBusinessesGateway,
  webhookSecretOf,
} from '../helpers/businesses.ts';
import { until } from '../helpers/eventually.ts';
import {
  dataOf,
  gql,
  sandboxUpstreams,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.ts';
import { follow, testToken } from '../helpers/processes.ts';
import { scaled } from '../helpers/timeouts.ts';
import {
  HAS_STATUS,
  type Operation,
  runOver,
  TRANSPORTS,
  type Transport,
  type WireResult,
  watchOver,
} from '../helpers/transports.ts';
import { postWebhook, signWebhook } from '../helpers/webhook-signature.ts';

const PENDING_SECONDS = 20;
/** How long NT-SLOW001 holds its caller's one upstream slot: ample for the requests made meanwhile. */
const SLOW_MS = 4000;

let setup: BusinessesSetup;
/** The sandbox's clock runs ahead of the wall clock by this much (pending payments settle). */
let offset = 0;
/** Low rates: one request a second, burst three (the three requests of graphql-sse single mode). */
let limited: TestGateway;
/** One upstream call at a time per caller, none queued; one live stream per caller. */
let bounded: TestGateway;

beforeAll(async () => {
  setup = await startBusinessesGateway(
    [A, B],
    { LIVE_POLL_MS: '300', UPSTREAM_TIMEOUT_MS: '5000' },
    { pendingSeconds: PENDING_SECONDS, slowMs: SLOW_MS, now: () => Date.now() + offset },
  );
  const upstreams = sandboxUpstreams(setup.sandbox);
  [limited, bounded] = await Promise.all([
    startGateway(
      upstreams,
      {
        RATE_LIMIT_RPS: '1',
        RATE_LIMIT_BURST: '3',
        SERVICE_RATE_LIMIT_RPS: '1',
        SERVICE_RATE_LIMIT_BURST: '3',
      },
      { businessesFile: setup.file },
    ),
    startGateway(
      upstreams,
      {
        UPSTREAM_MAX_CONCURRENT_PER_CALLER: '1',
        SERVICE_UPSTREAM_MAX_CONCURRENT_PER_CALLER: '1',
        UPSTREAM_MAX_QUEUED_PER_CALLER: '0',
        UPSTREAM_TIMEOUT_MS: String(SLOW_MS * 5),
        LIVE_MAX_PER_CALLER: '1',
      },
      { businessesFile: setup.file },
    ),
  ]);
}, scaled(30_000));
afterAll(async () => {
  await Promise.all([limited?.close(), bounded?.close()]);
  await setup?.close();
});

/** Tokens of A and B for the same subject: only the business claim tells them apart. */
function tokens(sub = 'svc-isolation'): Promise<[string, string]> {
  return Promise.all([setup.token(A, { sub }), setup.token(B, { sub })]);
}

const FIELDS = 'txRef status merchantRef amountMoney { amount } customer { fullName }';
const TX = `query Tx($txRef: ID!) { transaction(txRef: $txRef) { ${FIELDS} } }`;
const STATUS = `subscription Watch($txRef: ID!) { transactionStatus(txRef: $txRef) { ${FIELDS} } }`;

const paymentCallsFor = (txRef: string) => paymentCallsOf(setup.sandbox, txRef);
const kycCallsFor = (userRef: string) => kycCallsOf(setup.sandbox, userRef);
/**
 * References no other test reads, for the checks that a request made no upstream call: other
 * gateways' live polls may call the sandbox meanwhile, never for these.
 */
function unread(): { txRef: string; userRef: string } {
  unique += 1;
  return {
    txRef: `NT-NOCALL${process.pid}x${unique}`,
    userRef: `usr_nocall_${process.pid}_${unique}`,
  };
}
function expectNoCallFor({ txRef, userRef }: { txRef: string; userRef: string }): void {
  expect(paymentCallsFor(txRef)).toEqual([]);
  expect(kycCallsFor(userRef)).toEqual([]);
}

let unique = 0;
/** A reference no other test of this file reads (a synthetic record every business knows). */
function freshGenRef(): string {
  unique += 1;
  return `NT-GEN${process.pid}${unique}`;
}

function payloadsOf(out: WireResult): string {
  return JSON.stringify(out.results);
}

describe('the same txRef under A and B, over every transport', () => {
  for (const order of [
    [A, B],
    [B, A],
  ] as const) {
    it.each(TRANSPORTS)(`over %s, ${order[0]} reading first`, async (transport) => {
      const txRef = freshGenRef();
      const [tokenA, tokenB] = await tokens();
      const tokenOf = { [A]: tokenA, [B]: tokenB };
      const answers: Record<string, WireResult> = {};
      for (const business of order) {
        answers[business] = await runOver(
          transport,
          setup.gateway.url,
          { query: TX, variables: { txRef } },
          { token: tokenOf[business], timeoutMs: scaled(5000) },
        );
      }
      for (const business of order) {
        const out = answers[business] as WireResult;
        expect(out.codes).toEqual([]);
        expect(out.results.length).toBeGreaterThan(0);
        expectOwn(payloadsOf(out), business);
      }
      // The second business's read was not served from the first one's record: each business's
      // own upstream call, with its own credential.
      expect(paymentCallsFor(txRef)).toEqual([...order]);
      // Two different customers: the same reference names two payments.
      const name = (business: string) =>
        JSON.stringify((answers[business] as WireResult).results).match(
          /"fullName":"([^"]+)"/,
        )?.[1];
      expect(name(A)).toBeDefined();
      expect(name(A)).not.toBe(name(B));
    });
  }
});

describe('verifyTransaction and refreshKycUser under A and B', () => {
  it("B's fresh read, which updates the cache, leaves A's cached record A's", async () => {
    const [tokenA, tokenB] = await tokens('svc-fresh');
    const txRef = freshGenRef();
    const userRef = 'usr_demo_failedcheck';
    const FRESH = `mutation F($txRef: ID!, $userRef: ID!) {
      verifyTransaction(txRef: $txRef) { ${FIELDS} }
      refreshKycUser(userRef: $userRef) { userRef name }
    }`;
    const READ = `query R($txRef: ID!, $userRef: ID!) {
      transaction(txRef: $txRef) { ${FIELDS} }
      kycUser(userRef: $userRef) { userRef name }
    }`;
    const nameOf = (index: number) => setup.sandbox.businesses?.[index]?.kyc.get(userRef)?.name;
    const variables = { txRef, userRef };
    // A's records cached by A's read; then B's fresh reads; then A's read again.
    const steps = [
      [READ, tokenA, A, 0],
      [FRESH, tokenB, B, 1],
      [READ, tokenA, A, 0],
      [FRESH, tokenA, A, 0],
      [READ, tokenB, B, 1],
    ] as const;
    for (const [document, token, business, index] of steps) {
      const data = dataOf(await gql(setup.gateway, document, variables, token));
      const text = JSON.stringify(data);
      expectOwn(text, business);
      expect(text).toContain(JSON.stringify(nameOf(index)));
    }
    expect(nameOf(0)).not.toBe(nameOf(1));
    // Each fresh read was its business's own upstream call; each read after it a hit of its own.
    expect(paymentCallsFor(txRef)).toEqual([A, B, A]);
    expect(kycCallsFor(userRef)).toEqual([A, B, A]);
  });
});

describe('@defer and @stream under A and B', () => {
  const DEFER = `query Tx($txRef: ID!) { transaction(txRef: $txRef) { txRef ... @defer { merchantRef customer { fullName } } } }`;
  const STREAM = `query Txs($txRefs: [ID!]!) { transactions(txRefs: $txRefs) @stream(initialCount: 0) { txRef merchantRef customer { fullName } } }`;
  const INCREMENTAL: Transport[] = ['multipart', 'SSE distinct', 'SSE single', 'WebSocket'];

  it.each(INCREMENTAL)('over %s: every part is the asking business’s', async (transport) => {
    const [tokenA, tokenB] = await tokens('svc-incremental');
    const refs = [freshGenRef(), freshGenRef()];
    for (const [business, token] of [
      [A, tokenA],
      [B, tokenB],
      [A, tokenA],
    ] as const) {
      for (const operation of [
        { query: DEFER, variables: { txRef: refs[0] } },
        { query: STREAM, variables: { txRefs: refs } },
      ]) {
        const out = await runOver(transport, setup.gateway.url, operation, {
          token,
          timeoutMs: scaled(5000),
        });
        expect(out.codes).toEqual([]);
        // Incrementally (several parts), except over WebSocket: graphql-ws gets the whole
        // answer in one message.
        if (transport === 'WebSocket') expect(out.results).toHaveLength(1);
        else expect(out.results.length).toBeGreaterThan(1);
        expectOwn(payloadsOf(out), business);
      }
    }
  });
});

describe('_entities (federation) under A and B', () => {
  const ENTITIES = `query Entities($representations: [_Any!]!) {
    _entities(representations: $representations) {
      __typename
      ... on Transaction { txRef merchantRef customer { fullName } }
      ... on KycUser { userRef name }
    }
  }`;

  it("answers each business's own transaction and KYC user, B's filling the cache first", async () => {
    const [tokenA, tokenB] = await tokens('svc-router');
    const txRef = freshGenRef();
    const userRef = 'usr_demo_tier3';
    const representations = [
      { __typename: 'Transaction', txRef },
      { __typename: 'KycUser', userRef },
    ];
    const kycName = (index: number) => setup.sandbox.businesses?.[index]?.kyc.get(userRef)?.name;
    for (const [business, token, index] of [
      [B, tokenB, 1],
      [A, tokenA, 0],
    ] as const) {
      const data = dataOf(
        await gql<{ _entities: unknown[] }, unknown>(
          setup.gateway,
          ENTITIES,
          { representations },
          token,
        ),
      );
      expectOwn(JSON.stringify(data), business);
      expect(data._entities[1]).toEqual({ __typename: 'KycUser', userRef, name: kycName(index) });
    }
    expect(kycName(0)).not.toBe(kycName(1));
    expect(paymentCallsFor(txRef)).toEqual([B, A]);
    expect(kycCallsFor(userRef)).toEqual([B, A]);
  });
});

describe('kycUser and kycSdkConfig under A and B', () => {
  it("answer each business's user, public key and slug", async () => {
    const [tokenA, tokenB] = await tokens('svc-kyc');
    const businesses = setup.sandbox.businesses ?? [];
    const userRef = 'usr_demo_tier1';
    const QUERY = `query K($userRef: ID!) {
      kycUser(userRef: $userRef) { userRef name level }
      kycSdkConfig(userRef: $userRef, name: "Test User", levelSlug: "tier_2") { publicKey slug userRef }
    }`;
    for (const [token, index] of [
      [tokenA, 0],
      [tokenB, 1],
    ] as const) {
      const own = businesses[index];
      const data = dataOf(await gql(setup.gateway, QUERY, { userRef }, token));
      expect(data).toEqual({
        kycUser: { userRef, name: own?.kyc.get(userRef)?.name, level: 1 },
        kycSdkConfig: {
          publicKey: own?.credentials.kycPublicKey,
          slug: own?.credentials.kycBusinessSlug,
          userRef,
        },
      });
    }
    expect(businesses[0]?.credentials.kycPublicKey).not.toBe(
      businesses[1]?.credentials.kycPublicKey,
    );
  });
});

/** Sends a payment or KYC notification for `reference` to `business`'s path, with its secret. */
function notify(business: string, source: 'payment' | 'kyc', reference: Record<string, string>) {
  unique += 1;
  const body = JSON.stringify({
    id: `evt_${process.pid}_${unique}`,
    event: 'CHANGED',
    data: reference,
  });
  return postWebhook(setup.gateway.url, `/webhooks/${source}/${business}`, body, [
    webhookSecretOf(business),
  ]);
}

const STREAMING: Transport[] = ['SSE distinct', 'SSE single', 'multipart', 'WebSocket'];

/** Runs `operation` over `transport` with a token, until its first two results. */
function twoResults(transport: Transport, operation: Operation) {
  return (token: string) =>
    watchOver(transport, setup.gateway.url, operation, {
      token,
      maxResults: 2,
      timeoutMs: scaled(30_000),
    });
}

describe('transactionStatus: A never receives B’s pushes', () => {
  it.each(STREAMING)('over %s', async (transport) => {
    const [tokenA, tokenB] = await tokens('svc-live');
    unique += 1;
    const txRef = `NT-PENDING${process.pid}x${unique}`;
    const watch = twoResults(transport, { query: STATUS, variables: { txRef } });
    // B's payment starts pending first; A's half a pending time later.
    // Each clock step waits for the watch's first value: a watch reads the record again as it
    // joins, and after the step that read would already see the payment settled.
    const b = watch(tokenB);
    await b.first;
    offset += (PENDING_SECONDS * 1000) / 2 + 1000;
    const a = watch(tokenA);
    await a.first;
    // B's payment settles, A's is still pending: B's push (its notification and its polls).
    offset += (PENDING_SECONDS * 1000) / 2;
    expect((await notify(B, 'payment', { txRef })).status).toBe(202);
    expectPendingThenSettled(await b.done, B);
    // Now A's settles, and A's own notification pushes it.
    offset += PENDING_SECONDS * 1000;
    expect((await notify(A, 'payment', { txRef })).status).toBe(202);
    expectPendingThenSettled(await a.done, A);
    expect(new Set(paymentCallsFor(txRef))).toEqual(new Set([A, B]));
  });
});

describe('kycStatus: A never receives B’s pushes', () => {
  const KYC_STATUS =
    'subscription K($userRef: ID!) { kycStatus(userRef: $userRef) { userRef name level } }';

  it.each(STREAMING)('over %s', async (transport) => {
    const [tokenA, tokenB] = await tokens('svc-kyc-live');
    unique += 1;
    const userRef = `usr_iso_${process.pid}_${unique}`;
    const stores = (setup.sandbox.businesses ?? []).map((business) => business.kyc);
    const passed = [{ name: 'gender', status: true, query: { gender: 'female' }, result: {} }];
    stores[0]?.recordLevel(userRef, 'tier_1', passed, { name: 'Alice of A' });
    stores[1]?.recordLevel(userRef, 'tier_1', passed, { name: 'Bola of B' });
    const watch = twoResults(transport, { query: KYC_STATUS, variables: { userRef } });
    const a = watch(tokenA);
    const b = watch(tokenB);
    await Promise.all([a.first, b.first]);
    expect(new Set(kycCallsFor(userRef))).toEqual(new Set([A, B]));
    // B's user reaches level 2; B's notification pushes it.
    stores[1]?.recordLevel(userRef, 'tier_2', [{ name: 'bvn', status: true }]);
    expect((await notify(B, 'kyc', { userRef })).status).toBe(202);
    const outB = await b.done;
    expect(outB.results).toEqual([
      { data: { kycStatus: { userRef, name: 'Bola of B', level: 1 } } },
      { data: { kycStatus: { userRef, name: 'Bola of B', level: 2 } } },
    ]);
    // A's user changes only now: whatever A received before was A's alone.
    stores[0]?.recordLevel(userRef, 'tier_2', [{ name: 'bvn', status: true }]);
    expect((await notify(A, 'kyc', { userRef })).status).toBe(202);
    const outA = await a.done;
    expect(outA.results).toEqual([
      { data: { kycStatus: { userRef, name: 'Alice of A', level: 1 } } },
      { data: { kycStatus: { userRef, name: 'Alice of A', level: 2 } } },
    ]);
  });
});

describe('confirmPayment claims are per business', () => {
  const CONFIRM = `mutation C($txRef: ID!, $order: OrderInput!) {
    confirmPayment(txRef: $txRef, order: $order) { confirmed problems transaction { merchantRef } }
  }`;
  type Confirmation = {
    confirmPayment: {
      confirmed: boolean;
      problems: string[];
      transaction: { merchantRef: string };
    };
  };

  it("A's claim of a payment for order X neither blocks nor shows under B, and B's not under A", async () => {
    const [tokenA, tokenB] = await tokens('svc-confirm');
    const txRef = 'NT-SUCCESS001';
    const orderOf: Record<string, (id: string) => Record<string, string>> = {
      [A]: (id: string) => ({ id, amount: '15000.50', currency: 'NGN', merchantRef: 'ORDER-1001' }),
      [B]: (id: string) => ({
        id,
        amount: '16000.50',
        currency: 'NGN',
        merchantRef: 'ORDER-1001-SHOP-B',
      }),
    };
    const confirm = async (business: typeof A | typeof B, orderId: string) => {
      const token = business === A ? tokenA : tokenB;
      const order = orderOf[business]?.(orderId);
      const data = dataOf(
        await gql<Confirmation, unknown>(setup.gateway, CONFIRM, { txRef, order }, token),
      );
      expectOwn(JSON.stringify(data), business);
      return { confirmed: data.confirmPayment.confirmed, problems: data.confirmPayment.problems };
    };
    const yes = { confirmed: true, problems: [] };
    const taken = { confirmed: false, problems: ['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER'] };
    expect(await confirm(A, 'order-x')).toEqual(yes);
    // The same payment reference under B is B's payment: its own first claim.
    expect(await confirm(B, 'order-y')).toEqual(yes);
    expect(await confirm(A, 'order-x')).toEqual(yes);
    expect(await confirm(B, 'order-y')).toEqual(yes);
    // Each business's claim holds for itself; B's did not replace A's, nor A's B's.
    expect(await confirm(A, 'order-y')).toEqual(taken);
    expect(await confirm(B, 'order-x')).toEqual(taken);
  });
});

describe('rate limits and per-caller bounds are per business', () => {
  it.each(TRANSPORTS)(
    "over %s: A's caller over its rate does not limit B's caller of the same sub",
    async (transport) => {
      const sub = `svc-rate-${transport.replace(/\W/g, '')}`;
      const [tokenA, tokenB] = await Promise.all([
        limited.token({ sub, biz: A }),
        limited.token({ sub, biz: B }),
      ]);
      const operation = { query: '{ __typename }' };
      let limitedA: WireResult | undefined;
      await until(async () => {
        limitedA = await runOver(transport, limited.url, operation, { token: tokenA });
        return limitedA.codes.includes('RATE_LIMITED');
      }, 5000);
      if (HAS_STATUS[transport]) expect(limitedA?.status).toBe(429);
      const outB = await runOver(transport, limited.url, operation, { token: tokenB });
      expect(outB.codes).toEqual([]);
      expect(payloadsOf(outB)).toContain('"__typename":"Query"');
    },
  );

  it("A's caller at its concurrency bound does not hold back B's caller of the same sub", async () => {
    const sub = 'svc-share';
    const [tokenA, tokenB] = await Promise.all([
      bounded.token({ sub, biz: A }),
      bounded.token({ sub, biz: B }),
    ]);
    const slow = gql(bounded, TX, { txRef: 'NT-SLOW001' }, tokenA);
    await until(() => paymentCallsFor('NT-SLOW001').includes(A), 5000);
    // A's one call in flight: A's next read is refused (none queued) ...
    const refused = await gql(bounded, TX, { txRef: freshGenRef() }, tokenA);
    expect(refused.errors?.map((error) => error.extensions?.code)).toEqual([
      'UPSTREAM_UNAVAILABLE',
    ]);
    // ... and B's caller with the same sub is served at once.
    const servedB = dataOf(await gql(bounded, TX, { txRef: freshGenRef() }, tokenB));
    expectOwn(JSON.stringify(servedB), B);
    expectOwn(JSON.stringify(dataOf(await slow)), A);
  });
});

describe('live streams per caller are per business', () => {
  it("A's caller at its one live stream does not keep B's caller of the same sub from watching", async () => {
    const sub = 'svc-live-bound';
    const [tokenA, tokenB] = await Promise.all([
      bounded.token({ sub, biz: A }),
      bounded.token({ sub, biz: B }),
    ]);
    unique += 1;
    const txRef = `NT-PENDING${process.pid}b${unique}`;
    const held = follow(bounded, txRef, tokenA);
    try {
      await held.first;
      expect(held.errors).toEqual([]);
      const operation = { query: STATUS, variables: { txRef } };
      const secondA = await runOver('SSE distinct', bounded.url, operation, {
        token: tokenA,
        maxResults: 1,
        timeoutMs: scaled(5000),
      });
      expect(secondA.codes).toEqual(['RATE_LIMITED']);
      const firstB = await runOver('SSE distinct', bounded.url, operation, {
        token: tokenB,
        maxResults: 1,
        timeoutMs: scaled(5000),
      });
      expect(firstB.codes).toEqual([]);
      expectOwn(firstB.raw, B);
    } finally {
      held.stop();
    }
  });
});

describe('a token naming no business served', () => {
  const CASES = [
    ['no business claim', () => setup.gateway.token({ sub: 'svc-nobiz' })],
    ['an unknown business', () => setup.token('shop-z', { sub: 'svc-nobiz' })],
    [
      'a business claim that is not a string',
      () => setup.gateway.token({ sub: 'svc-nobiz', biz: [A] }),
    ],
    ['a business claim of the wrong case', () => setup.token('SHOP-A', { sub: 'svc-nobiz' })],
  ] as const;

  for (const [what, token] of CASES) {
    it.each(TRANSPORTS)(
      `${what}: 401 UNAUTHENTICATED over %s, no upstream call`,
      async (transport) => {
        const refs = unread();
        for (const operation of [
          { query: TX, variables: { txRef: refs.txRef } },
          { query: STATUS, variables: { txRef: refs.txRef } },
          {
            query: 'query K($userRef: ID!) { kycUser(userRef: $userRef) { name } }',
            variables: { userRef: refs.userRef },
          },
        ]) {
          const out = await runOver(transport, setup.gateway.url, operation, {
            token: await token(),
            timeoutMs: scaled(5000),
          });
          if (transport === 'WebSocket') {
            expect(out.close).toBe(4403);
            expect(out.results).toEqual([]);
          } else {
            expect(out.status).toBe(401);
            expect(out.codes).toEqual(['UNAUTHENTICATED']);
          }
          expect(out.raw).not.toContain(B_MARKER);
        }
        expectNoCallFor(refs);
      },
    );
  }
});

describe('AUTH_BUSINESS_CLAIM', () => {
  it('names the claim read: `biz` is then no business, the named claim is', async () => {
    const renamed = await startGateway(
      sandboxUpstreams(setup.sandbox),
      { AUTH_BUSINESS_CLAIM: 'tenant' },
      { businessesFile: setup.file },
    );
    try {
      const refs = unread();
      const byBiz = await gql(renamed, TX, { txRef: refs.txRef }, await renamed.token({ biz: B }));
      expect(byBiz.status).toBe(401);
      expectNoCallFor(refs);
      const byTenant = await testToken('svc-tenant', 'transactions:read kyc:read', { tenant: B });
      const data = dataOf(await gql(renamed, TX, { txRef: 'NT-SUCCESS001' }, byTenant));
      expectOwn(JSON.stringify(data), B);
    } finally {
      await renamed.close();
    }
  });
});

describe('webhooks per business', () => {
  /** A notification of references no other test reads. */
  const body = (refs = unread()) =>
    JSON.stringify({
      id: `evt_w${refs.txRef}`,
      data: { txRef: refs.txRef, userRef: refs.userRef },
    });
  const secretA = webhookSecretOf(A);

  it('remembers notifications per business: the same bytes and time, each signed by its own, are each new', async () => {
    const url = setup.gateway.url;
    const t = Math.floor(Date.now() / 1000);
    const text = body();
    const send = (business: string) =>
      fetch(`${url}/webhooks/payment/${business}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-webhook-signature': signWebhook(text, [webhookSecretOf(business)], t),
        },
        body: text,
      }).then((response) => response.status);
    expect(await send(A)).toBe(202);
    expect(await send(A)).toBe(200);
    expect(await send(B)).toBe(202);
    expect(await send(B)).toBe(200);
  });

  it.each(['payment', 'kyc'])(
    "/webhooks/%s: A's signature on B's path 401, on A's 202; no id, or an unknown business, 404",
    async (source) => {
      const url = setup.gateway.url;
      const refused = unread();
      for (const [path, secrets, status] of [
        [`/webhooks/${source}/${B}`, [secretA], 401],
        // Both secrets in the header: B's path checks B's alone, which is absent.
        [`/webhooks/${source}/${B}`, [secretA, 'x'.repeat(32)], 401],
        [`/webhooks/${source}`, [secretA], 404],
        [`/webhooks/${source}/`, [secretA], 404],
        [`/webhooks/${source}/shop-z`, [secretA], 404],
      ] as const) {
        expect((await postWebhook(url, path, body(refused), [...secrets])).status).toBe(status);
      }
      expectNoCallFor(refused);
      const refs = unread();
      const accepted = await postWebhook(url, `/webhooks/${source}/${A}`, body(refs), [secretA]);
      expect(accepted.status).toBe(202);
      expect(accepted.body).not.toContain(secretA);
      // What an accepted notification fetches, it fetches as A.
      const calls = () =>
        source === 'payment' ? paymentCallsFor(refs.txRef) : kycCallsFor(refs.userRef);
      await until(() => calls().length > 0, 5000);
      expect(new Set(calls())).toEqual(new Set([A]));
    },
  );
});

describe('what one business holds, used by another', () => {
  it("B's token on A's graphql-sse reservation is refused, on the operation and on the stream", async () => {
    const [tokenA, tokenB] = await tokens('svc-reserve');
    const url = `${setup.gateway.url}/graphql`;
    const reserve = async () => {
      const reserved = await fetch(url, {
        method: 'PUT',
        headers: { authorization: `Bearer ${tokenA}` },
      });
      expect(reserved.status).toBe(201);
      return reserved.text();
    };
    const refs = unread();
    const streamToken = await reserve();
    const operation = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokenB}`,
        'content-type': 'application/json',
        'x-graphql-event-stream-token': streamToken,
      },
      body: JSON.stringify({
        query: TX,
        variables: { txRef: refs.txRef },
        extensions: { operationId: 'b' },
      }),
    });
    expect(operation.status).toBe(404);
    expect(await operation.text()).not.toContain(B_MARKER);
    const stream = await fetch(url, {
      headers: {
        authorization: `Bearer ${tokenB}`,
        accept: 'text/event-stream',
        'x-graphql-event-stream-token': await reserve(),
      },
    });
    expect(stream.status).toBe(404);
    await stream.body?.cancel();
    expectNoCallFor(refs);
  });

  it("a document A persisted runs under B with B's data (documents are shared, data is not)", async () => {
    const [tokenA, tokenB] = await tokens('svc-persisted');
    const txRef = freshGenRef();
    const document = `query Persisted($txRef: ID!) { transaction(txRef: $txRef) { ${FIELDS} } }`;
    const sha256Hash = createHash('sha256').update(document).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const registered = await runOver(
      'POST',
      setup.gateway.url,
      { query: document, variables: { txRef }, extensions },
      { token: tokenA },
    );
    expect(registered.codes).toEqual([]);
    expectOwn(registered.raw, A);
    for (const transport of ['GET', 'POST'] as const) {
      const byHash = await runOver(
        transport,
        setup.gateway.url,
        { variables: { txRef }, extensions },
        { token: tokenB },
      );
      expect(byHash.codes).toEqual([]);
      expectOwn(byHash.raw, B);
    }
  });
});
