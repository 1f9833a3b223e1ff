/**
 * The replica tests on a real 3-master Redis Cluster (`CACHE_URL=redis+cluster://…`): two
 * `node src/main.ts` gateways share the cluster and the upstreams. The shared cache, single
 * flight, live status (one poller for both, heartbeats and events on sharded channels), the
 * webhooks' replay guard and refresh, confirmation claims with their ledger, and persisted
 * queries — each script's keys in one slot, else the cluster answers CROSSSLOT and the test fails.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import {
  type Fixture,
  kycByRef,
  type SettlingPayment,
  startFixture,
  startSettlingPayment,
  transactionBody,
} from '../helpers/fixture.ts';
import {
  follow,
  type GatewayProcess,
  query,
  spawnReplicas,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import {
  skipRedisClusterTests,
  startRedisCluster,
  type TestRedisCluster,
} from '../helpers/redis.ts';
import { signWebhook } from '../helpers/webhook-signature.ts';

const skip = skipRedisClusterTests('redis-cluster');
const SECRET = 'whsec_cluster_test_0123456789abcdef';
const KEY = Buffer.alloc(32, 5).toString('base64');
const POLL_MS = 200;

let cluster: TestRedisCluster;
let payment: SettlingPayment;
let kyc: Fixture;
let a: GatewayProcess;
let b: GatewayProcess;
let token: string;
let confirmToken: string;

beforeAll(async () => {
  if (skip) return;
  cluster = await startRedisCluster();
  payment = await startSettlingPayment(Number.POSITIVE_INFINITY);
  const { settleAt } = payment;
  payment.fixture.setHandler((request) => {
    const txRef = request.path.split('/').pop() ?? '';
    const settled = Date.now() >= (settleAt.get(txRef) ?? Number.POSITIVE_INFINITY);
    return {
      // A slow reference, so that concurrent misses really overlap.
      delayMs: txRef.startsWith('NT-SLOW') ? 500 : 0,
      body: transactionBody({
        paymentRef: txRef,
        amount: '1000.50',
        txStatus: settled ? 'SUCCESSFUL' : 'PENDING',
        txIsSucces: settled,
      }),
    };
  });
  kyc = await startFixture(kycByRef);
  [a, b] = await spawnReplicas(
    { paymentUrl: payment.fixture.url, kycUrl: kyc.url },
    {
      CACHE_URL: cluster.url,
      CACHE_ENCRYPTION_KEY: KEY,
      WEBHOOK_SECRET: SECRET,
      LIVE_POLL_MS: String(POLL_MS),
      LIVE_HEARTBEAT_MS: '250',
      LIVE_MAX_PER_CALLER: '100',
    },
  );
  token = await testToken();
  confirmToken = await testToken('merchant-backend', 'transactions:read');
}, 90_000);

afterAll(async () => {
  await stopAllGateways();
  await payment?.fixture.close();
  await kyc?.close();
  await cluster?.stop();
});

const TX = (txRef: string) => `{ transaction(txRef: "${txRef}") { txRef status } }`;

describe.skipIf(skip)('two gateways on a 3-master Redis Cluster', () => {
  it('the cluster is up and the gateways say Redis is connected', async () => {
    expect(await a.metric('gateway_redis_up')).toBe(1);
    expect(await b.metric('gateway_redis_up')).toBe(1);
  });

  it('shared cache: a record read through one gateway is served by the other with no upstream call', async () => {
    const txRef = `NT-SHARED${Date.now()}`;
    settleAtNow(txRef);
    expect((await query(a, TX(txRef), token)).body.data).toEqual({
      transaction: { txRef, status: 'SUCCESSFUL' },
    });
    expect(payment.callsFor(txRef)).toBe(1);
    expect((await query(b, TX(txRef), token)).body.data).toEqual({
      transaction: { txRef, status: 'SUCCESSFUL' },
    });
    expect(payment.callsFor(txRef)).toBe(1);
  });

  it('single flight: 40 concurrent misses of one reference over both gateways make one upstream call', async () => {
    const txRef = `NT-SLOW${Date.now()}`;
    settleAtNow(txRef);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => query(i % 2 ? b : a, TX(txRef), token)),
    );
    for (const answer of answers) {
      expect(answer.body.data).toEqual({ transaction: { txRef, status: 'SUCCESSFUL' } });
    }
    expect(payment.callsFor(txRef)).toBe(1);
  });

  it('live status: subscribers on both gateways, one poller for the cluster, all see PENDING then SUCCESSFUL', async () => {
    const txRef = `NT-LIVE${Date.now()}`;
    payment.settleAt.set(txRef, Date.now() + 2000);
    const followers = Array.from({ length: 10 }, (_, i) => follow(i % 2 ? b : a, txRef, token));
    await Promise.all(followers.map((f) => f.first));
    await until(
      async () =>
        (await a.metric('gateway_live_pollers')) + (await b.metric('gateway_live_pollers')) === 1,
      3000,
    );
    await Promise.race([Promise.all(followers.map((f) => f.done)), sleep(15_000)]);
    for (const f of followers) {
      expect(f.errors).toEqual([]);
      expect(f.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
      expect(f.completed).toBe(true);
    }
    const polls = [
      await a.metric('gateway_live_polls_total'),
      await b.metric('gateway_live_polls_total'),
    ];
    expect(polls.filter((count) => count > 0)).toHaveLength(1);
  });

  it('webhooks: 202 and one fresh fetch on one gateway; the same notification on the other is a replay', async () => {
    const txRef = `NT-HOOK${Date.now()}`;
    const body = JSON.stringify({ event: 'PAYMENT_PENDING', data: { txRef } });
    const signature = signWebhook(body, [SECRET]);
    expect((await notify(a, body, signature)).status).toBe(202);
    await until(() => payment.callsFor(txRef) === 1, 3000);
    expect((await notify(b, body, signature)).status).toBe(200);
    expect((await notify(a, body, signature)).status).toBe(200);
    await sleep(150);
    expect(payment.callsFor(txRef)).toBe(1);
  });

  it('claims: 30 concurrent confirmations for 30 orders over both gateways confirm exactly one', async () => {
    const txRef = `NT-CLAIM${Date.now()}`;
    settleAtNow(txRef);
    const orders = Array.from({ length: 30 }, (_, i) => `order-${i}`);
    const answers = await Promise.all(
      orders.map((orderId, i) => confirm(i % 2 ? b : a, txRef, orderId)),
    );
    expect(answers.flatMap((answer) => answer.codes)).toEqual([]);
    const won = orders.filter((_, i) => answers[i]?.confirmed);
    expect(won).toHaveLength(1);
    for (const [i, answer] of answers.entries()) {
      if (orders[i] !== won[0])
        expect(answer.problems).toEqual(['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER']);
    }
    // The ledger is where every claims script checks it: in the claims' slot, with a marker.
    expect(String(await cluster.command(['GET', 'gw:{confirm:v2}:ledger']))).toMatch(/^e:/);
  });

  it('persisted queries: a document registered on one gateway runs by its hash on the other', async () => {
    const text = `query ClusterApq_${Date.now()} { gatewayInfo { version } }`;
    const first = await apq(b, text, false);
    expect(first.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const registered = await apq(a, text, true);
    expect(registered.code).toBeUndefined();
    const byHash = await apq(b, text, false);
    expect(byHash.code).toBeUndefined();
    expect(byHash.data).toEqual(registered.data);
  });

  it('no script hit a CROSSSLOT or other Redis failure on either gateway', async () => {
    for (const gateway of [a, b]) {
      expect(await gateway.metric('gateway_redis_errors_total')).toBe(0);
    }
  });
});

function settleAtNow(txRef: string): void {
  payment.settleAt.set(txRef, 0);
}

async function notify(gateway: GatewayProcess, body: string, signature: string) {
  const response = await fetch(`${gateway.url}/webhooks/payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.text() };
}

async function confirm(gateway: GatewayProcess, txRef: string, orderId: string) {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${confirmToken}` },
    body: JSON.stringify({
      query: `mutation($txRef: ID!, $order: OrderInput!) {
        confirmPayment(txRef: $txRef, order: $order) { confirmed problems }
      }`,
      variables: { txRef, order: { id: orderId, amount: '1000.50', currency: 'NGN' } },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as {
    data?: { confirmPayment: { confirmed: boolean; problems: string[] } } | null;
    errors?: Array<{ extensions?: { code?: unknown } }>;
  };
  return {
    confirmed: body.data?.confirmPayment.confirmed ?? false,
    problems: body.data?.confirmPayment.problems ?? [],
    codes: (body.errors ?? []).map((error) => error.extensions?.code),
  };
}

async function apq(gateway: GatewayProcess, text: string, withQuery: boolean) {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      ...(withQuery && { query: text }),
      extensions: {
        persistedQuery: {
          version: 1,
          sha256Hash: createHash('sha256').update(text).digest('hex'),
        },
      },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as {
    data?: unknown;
    errors?: { extensions?: { code?: string } }[];
  };
  return { data: body.data, code: body.errors?.[0]?.extensions?.code };
}
