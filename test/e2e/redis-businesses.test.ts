/**
 * Two businesses on two replicas sharing one real redis-server: two `node src/main.ts`
 * processes read the same businesses file, in front of a real sandbox serving A and B. A record
 * of A cached through one replica is never served to B through the other; a notification of A
 * arriving at one replica pushes to A's subscribers of the other, never to B's; a caller's rate is
 * shared by the replicas and its business's alone; A's sealed record copied under B's key, and
 * A's live messages replayed on B's channel, are refused as B's; graphql-sse's single connection
 * spread over both replicas reads each business's own; and every key the gateways wrote for a
 * business is under that business's namespace (`biz:<id>`), save the persisted documents and
 * graphql-sse's reservations (no business's data), and the caller quotas (rate buckets, document
 * registrations), keyed by a hash of the caller, which is its business and its sub.
 */
import { createHash } from 'node:crypto';
import { createClient as createRedisClient } from '@redis/client';
import { createClient as createSseClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { startBalancer } from '../helpers/balancer.ts';
import {
  A,
  B,
  businessesFolder,
  expectOwn,
  expectPendingThenSettled,
  paymentCallsOf,
  sandboxBusinessEntry,
  webhookSecretOf,
  writeBusinessesFile,
} from '../helpers/businesses.ts';
import { until } from '../helpers/eventually.ts';
import {
  type Followed,
  follow,
  type GatewayProcess,
  query,
  spawnReplicas,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';
import { scaled } from '../helpers/timeouts.ts';
import { runOver, watchOver } from '../helpers/transports.ts';
import { postWebhook } from '../helpers/webhook-signature.ts';

const skip = skipRedisTests('redis-businesses');
const PENDING_SECONDS = 20;

let redis: TestRedis;
let sandbox: Sandbox;
let offset = 0;
const folder = businessesFolder();
let one: GatewayProcess;
let two: GatewayProcess;

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  sandbox = await startSandbox({
    businesses: [{ id: A }, { id: B }],
    pendingSeconds: PENDING_SECONDS,
    now: () => Date.now() + offset,
  });
  const file = writeBusinessesFile(folder.path(), [
    sandboxBusinessEntry(sandbox, A),
    sandboxBusinessEntry(sandbox, B),
  ]);
  [one, two] = await spawnReplicas(
    { paymentUrl: sandbox.paymentUrl, kycUrl: sandbox.kycUrl },
    {
      BUSINESSES_FILE: file,
      CACHE_URL: redis.url,
      CACHE_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
      CACHE_COMMAND_TIMEOUT_MS: '5000',
      LIVE_POLL_MS: '2000',
      // Rates in Redis, shared by the replicas: a burst no test but the rate's reaches.
      RATE_LIMIT_RPS: '1',
      RATE_LIMIT_BURST: '30',
      SERVICE_RATE_LIMIT_RPS: '1',
      SERVICE_RATE_LIMIT_BURST: '30',
    },
  );
}, scaled(30_000));
afterAll(async () => {
  await stopAllGateways();
  await sandbox?.close();
  await redis?.stop();
  folder.remove();
});

const token = (biz: string, sub = 'svc-replicas') =>
  testToken(sub, 'transactions:read kyc:read', { biz });
const FIELDS = 'txRef status merchantRef customer { fullName }';
const TX = (txRef: string) => `{ transaction(txRef: "${txRef}") { ${FIELDS} } }`;

describe.skipIf(skip)('two businesses, two replicas, one Redis', () => {
  it("A's record cached through one replica is not served to B through the other", async () => {
    const [tokenA, tokenB] = await Promise.all([token(A), token(B)]);
    const txRef = `NT-GEN${process.pid}7`;
    const first = await query(one, TX(txRef), tokenA);
    expectOwn(JSON.stringify(first.body), A);
    const other = await query(two, TX(txRef), tokenB);
    expectOwn(JSON.stringify(other.body), B);
    expect(paymentCallsOf(sandbox, txRef)).toEqual([A, B]);
    // The record is shared between the replicas (A through the second is a hit, and A's):
    // B's own upstream call above is the business's namespace at work, not a cache the replicas
    // do not share.
    const again = await query(two, TX(txRef), tokenA);
    expectOwn(JSON.stringify(again.body), A);
    const againB = await query(one, TX(txRef), tokenB);
    expectOwn(JSON.stringify(againB.body), B);
    expect(paymentCallsOf(sandbox, txRef)).toEqual([A, B]);
  });

  it("a notification of A at one replica pushes to A's subscribers of the other, never to B's", async () => {
    const [tokenA, tokenB] = await Promise.all([token(A, 'svc-watch'), token(B, 'svc-watch')]);
    const txRef = `NT-PENDING${process.pid}r`;
    const watch = (gateway: GatewayProcess, bearer: string) =>
      watchOver(
        'SSE distinct',
        gateway.url,
        {
          query:
            'subscription($t: ID!) { transactionStatus(txRef: $t) { txRef status merchantRef } }',
          variables: { t: txRef },
        },
        { token: bearer, maxResults: 2, timeoutMs: scaled(30_000) },
      );
    // A's payment starts pending first, B's half a pending time later, both watched on `one`.
    // Each clock step waits for the watch's first value: a watch that joins reads the record
    // again, and after the step that read would already see the payment settled.
    const a = watch(one, tokenA);
    await a.first;
    offset += (PENDING_SECONDS * 1000) / 2 + 1000;
    let endedB = false;
    const b = watch(one, tokenB);
    const bDone = b.done.finally(() => {
      endedB = true;
    });
    await b.first;
    // A's settles; B's stays pending. A's notification arrives at `two`.
    offset += (PENDING_SECONDS * 1000) / 2;
    const body = JSON.stringify({ id: `evt_${process.pid}_a`, data: { txRef } });
    expect(
      (await postWebhook(two.url, `/webhooks/payment/${A}`, body, [webhookSecretOf(A)])).status,
    ).toBe(202);
    expectPendingThenSettled(await a.done, A);
    // B's watch is still open: nothing of A's reached it.
    expect(endedB).toBe(false);
    offset += PENDING_SECONDS * 1000;
    const bodyB = JSON.stringify({ id: `evt_${process.pid}_b`, data: { txRef } });
    expect(
      (await postWebhook(two.url, `/webhooks/payment/${B}`, bodyB, [webhookSecretOf(B)])).status,
    ).toBe(202);
    expectPendingThenSettled(await bDone, B);
  });

  it("A's sealed record copied under B's key in Redis does not open as B's: B reads its own", async () => {
    const [tokenA, tokenB] = await Promise.all([token(A, 'svc-copy'), token(B, 'svc-copy')]);
    const txRef = `NT-GEN${process.pid}8`;
    expectOwn(JSON.stringify((await query(one, TX(txRef), tokenA)).body), A);
    const keyOf = (business: string) => `gw:cache:biz:${business}:tx:v4:${txRef}`;
    expect(await redis.command(['EXISTS', keyOf(A)])).toBe(1);
    // A hostile writer on Redis puts A's record where B's would be (B has none yet).
    expect(await redis.command(['COPY', keyOf(A), keyOf(B), 'REPLACE'])).toBe(1);
    for (const gateway of [two, one]) {
      expectOwn(JSON.stringify((await query(gateway, TX(txRef), tokenB)).body), B);
    }
    expect(
      paymentCallsOf(sandbox, txRef).filter((business) => business === B).length,
    ).toBeGreaterThan(0);
  });

  it("A's live messages replayed on B's channel are refused: B's watch sees nothing of them", async () => {
    const heard: Array<{ channel: string; message: string }> = [];
    const listener = createRedisClient({ url: redis.url });
    listener.on('error', () => {});
    await listener.connect();
    const [tokenA, tokenB] = await Promise.all([token(A, 'svc-replay'), token(B, 'svc-replay')]);
    const txRef = `NT-PENDING${process.pid}m`;
    let watchB: Followed | undefined;
    try {
      await listener.pSubscribe(`*:biz:${A}:live:{${txRef}}:events`, (message, channel) => {
        heard.push({ channel, message });
      });
      // A's payment settles: its live status is published on A's channel.
      const watchA = follow(two, txRef, tokenA);
      await watchA.first;
      offset += PENDING_SECONDS * 1000 + 1000;
      await until(() => watchA.completed, 15_000);
      expect(watchA.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
      await until(() => heard.length > 0, 5000);
      // B's payment of the same reference is still pending; A's messages replayed on B's channel.
      watchB = follow(one, txRef, tokenB);
      await watchB.first;
      const rejectedBefore =
        (await one.metric('gateway_live_messages_rejected_total')) +
        (await two.metric('gateway_live_messages_rejected_total'));
      for (const { channel, message } of heard) {
        const channelOfB = channel.replace(`:biz:${A}:`, `:biz:${B}:`);
        expect(channelOfB).not.toBe(channel);
        await redis.command(['PUBLISH', channelOfB, message]);
      }
      await until(
        async () =>
          (await one.metric('gateway_live_messages_rejected_total')) +
            (await two.metric('gateway_live_messages_rejected_total')) >
          rejectedBefore,
        5000,
      );
      expect(watchB.statuses).toEqual(['PENDING']);
      expect(watchB.completed).toBe(false);
      expect(watchB.errors).toEqual([]);
    } finally {
      watchB?.stop();
      listener.destroy();
    }
  });

  it("A's caller over its rate on one replica is limited on the other too, B's of the same sub on neither", async () => {
    const [tokenA, tokenB] = await Promise.all([token(A, 'svc-rate'), token(B, 'svc-rate')]);
    await until(async () => (await query(one, '{ __typename }', tokenA)).status === 429, 10_000);
    // The same bucket on the other replica: refused again at once (or after the one token a
    // slow second may have added), where a bucket of its own would serve a burst of 30.
    let servedOnTwo = 0;
    while ((await query(two, '{ __typename }', tokenA)).status !== 429) servedOnTwo += 1;
    expect(servedOnTwo).toBeLessThan(5);
    for (const gateway of [two, one]) {
      const served = await query(gateway, '{ __typename }', tokenB);
      expect(served.status).toBe(200);
      expect(served.body.data).toEqual({ __typename: 'Query' });
    }
  });

  it("graphql-sse single connection through a balancer over both replicas: each business's client reads its own", async () => {
    const balancer = await startBalancer([one.url, two.url], 500);
    try {
      await until(() => balancer.inRotation(one.url) && balancer.inRotation(two.url), 10_000);
      const txRef = `NT-GEN${process.pid}9`;
      for (const business of [A, B, A, B]) {
        const client = createSseClient({
          url: `${balancer.url}/graphql`,
          singleConnection: true,
          retryAttempts: 0,
          headers: { authorization: `Bearer ${await token(business, 'svc-single')}` },
        });
        try {
          // Several operations, so that round-robin sends them to both replicas.
          for (let i = 0; i < 3; i += 1) {
            const results: unknown[] = [];
            for await (const result of client.iterate({ query: TX(txRef) })) results.push(result);
            expect(results).toHaveLength(1);
            expectOwn(JSON.stringify(results), business);
          }
        } finally {
          client.dispose();
        }
      }
      expect(balancer.served.get(one.url)).toBeGreaterThan(0);
      expect(balancer.served.get(two.url)).toBeGreaterThan(0);
      expect(paymentCallsOf(sandbox, txRef)).toEqual([A, B]);
    } finally {
      await balancer.close();
    }
  });

  it('every key written for a business is under biz:<id>', async () => {
    const [tokenA, tokenB] = await Promise.all([token(A, 'svc-keys'), token(B, 'svc-keys')]);
    const CONFIRM =
      'mutation { confirmPayment(txRef: "NT-SUCCESS001", order: { id: "order-k", amount: "1", currency: "NGN" }) { confirmed } }';
    const txRef = `NT-PENDING${process.pid}k`;
    const open: Followed[] = [];
    for (const [gateway, bearer] of [
      [one, tokenA],
      [two, tokenB],
    ] as const) {
      await query(gateway, CONFIRM, bearer);
      await query(gateway, '{ kycUser(userRef: "usr_demo_tier1") { name } }', bearer);
      // A persisted document, and a graphql-sse reservation left open.
      const document = `{ transaction(txRef: "NT-SUCCESS001") { txRef } } # ${gateway.pid}`;
      const sha256Hash = createHash('sha256').update(document).digest('hex');
      const persisted = await runOver(
        'POST',
        gateway.url,
        { query: document, extensions: { persistedQuery: { version: 1, sha256Hash } } },
        { token: bearer },
      );
      expect(persisted.codes).toEqual([]);
      const reservation = await fetch(`${gateway.url}/graphql`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(reservation.status).toBe(201);
      const body = JSON.stringify({ id: `evt_keys_${gateway.pid}`, data: { txRef } });
      const business = gateway === one ? A : B;
      const secret = webhookSecretOf(business);
      const path = `/webhooks/payment/${business}`;
      expect((await postWebhook(gateway.url, path, body, [secret])).status).toBe(202);
      // A live watch, open while the keys are read.
      open.push(follow(gateway, txRef, bearer));
    }
    await Promise.all(open.map((watch) => watch.first));
    const keys = (await redis.command(['KEYS', '*'])) as string[];
    for (const watch of open) watch.stop();
    const kinds = new Map<string, string[]>();
    for (const key of keys) {
      const business = /[:{]biz:([^:]+)(:|$)/.exec(key)?.[1];
      const kind =
        business !== undefined
          ? `business ${business}`
          : /^gw:\{apq\}:/.test(key)
            ? 'persisted documents'
            : /^gw:(rl|apq:reg):[\w-]{22}$/.test(key)
              ? 'caller quotas'
              : /^gw:\{sse:[\w-]+\}:reservation$/.test(key)
                ? 'graphql-sse reservations'
                : 'other';
      kinds.set(kind, [...(kinds.get(kind) ?? []), key]);
    }
    console.info('[redis-businesses] keys by kind:', Object.fromEntries(kinds));
    expect(kinds.get('other') ?? []).toEqual([]);
    expect([...kinds.keys()].filter((kind) => kind.startsWith('business')).sort()).toEqual([
      `business ${A}`,
      `business ${B}`,
    ]);
    // Each business's records, claims, notifications and live watch are under its namespace.
    for (const business of [A, B]) {
      const own = (kinds.get(`business ${business}`) ?? []).join('\n');
      expect(own).toMatch(/:tx:/);
      expect(own).toMatch(/:kyc:/);
      expect(own).toMatch(/confirm/);
      expect(own).toMatch(/webhook/);
      expect(own).toContain(txRef);
    }
    // The caller quotas (rate buckets, document registrations) are keyed by a hash of the caller,
    // which is its business and its sub: the same sub under A and B is two quotas.
    const hashed = (caller: string) =>
      createHash('sha256').update(caller).digest('base64url').slice(0, 22);
    const quotas = kinds.get('caller quotas') ?? [];
    for (const business of [A, B]) {
      const caller = `biz:${business}:sub:svc-keys`;
      expect(quotas).toContain(`gw:rl:${hashed(`service:${caller}`)}`);
      expect(quotas).toContain(`gw:apq:reg:${hashed(caller)}`);
    }
  });
});
