/**
 * Signed notifications (docs/webhooks.md) against two `node src/main.ts` gateways that share one real
 * redis-server, in front of fixture upstreams on loopback: every answer documented there with the upstream
 * calls it costs (none for a refusal), replays refused across replicas, the body never taken as
 * the record, 1,000 notifications for one reference never more than one upstream call in flight,
 * pushes reaching every subscriber of both replicas before a poll could have, `kycStatus` fed by
 * KYC notifications, and its ownership rule. The signatures here are made with node:crypto
 * directly, not with the gateway's own signer.
 */
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient as createSseClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { until } from '../helpers/eventually.ts';
import { kycBody, startFixture, transactionBody } from '../helpers/fixture.ts';
import { startGateway } from '../helpers/gateway.ts';
import {
  type Followed,
  follow,
  type GatewayProcess,
  query,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { type RedisBench, skipRedisTests, startRedisBench } from '../helpers/redis.ts';
import { signWebhook } from '../helpers/webhook-signature.ts';

const skip = skipRedisTests('webhooks');
const SECRET = 'whsec_test_current_0123456789abcdef';
const OLD_SECRET = 'whsec_test_previous_0123456789abcdef';
const POLL_MS = 2000;
const BACKOFF = 10;

/** The signature header for `body`, with the current secret unless told. */
function sign(body: string, secrets: string[] = [SECRET], t?: number): string {
  return signWebhook(body, secrets, t);
}

interface Answer {
  status: number;
  body: string;
}

/** POSTs a notification; `signature: null` sends none. */
async function notify(
  gateway: { url: string },
  source: 'payment' | 'kyc',
  body: string,
  signature: string | null = sign(body),
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${gateway.url}/webhooks/${source}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(signature !== null && { 'x-webhook-signature': signature }),
      ...headers,
    },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.text() };
}

/** Sends `chunks` with chunked transfer encoding (no Content-Length), signed as one body. */
function notifyChunked(gateway: { url: string }, chunks: string[]): Promise<number> {
  const body = chunks.join('');
  return new Promise((resolve, reject) => {
    const req = request(`${gateway.url}/webhooks/payment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-signature': sign(body) },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    // The gateway may close the connection while more is being sent: the answer came first.
    req.on('error', (error) => (req.writableEnded ? undefined : reject(error)));
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

let bench: RedisBench;
let a: GatewayProcess;
let b: GatewayProcess;
let token: string;
let settleAt: Map<string, number>;
let callsFor: (txRef: string) => number;
/** KYC level per userRef, as the KYC fixture answers it. */
const kycLevels = new Map<string, number>();
/** Upstream calls in flight at once for one reference (payment fixture), at most. */
const inFlight = { now: new Map<string, number>(), max: new Map<string, number>() };
const DELAYED = 'NT-HOOKSLOW';

function kycCalls(userRef: string): number {
  return bench.kyc.requests.filter((r) => r.query.get('userRef') === userRef).length;
}

beforeAll(async () => {
  if (skip) return;
  bench = await startRedisBench(Number.POSITIVE_INFINITY);
  ({ settleAt, callsFor } = bench.payment);
  // The payment fixture, with in-flight counts and a slow reference (50 ms per answer).
  bench.payment.fixture.setHandler((request) => {
    const txRef = request.path.split('/').pop() ?? '';
    const settled = Date.now() >= (settleAt.get(txRef) ?? Number.POSITIVE_INFINITY);
    const delayMs = txRef.startsWith(DELAYED) ? 50 : 0;
    const now = (inFlight.now.get(txRef) ?? 0) + 1;
    inFlight.now.set(txRef, now);
    inFlight.max.set(txRef, Math.max(now, inFlight.max.get(txRef) ?? 0));
    // Created before the fixture's own timer of the same delay: counted out before the answer.
    setTimeout(() => inFlight.now.set(txRef, (inFlight.now.get(txRef) ?? 1) - 1), delayMs);
    return {
      delayMs,
      body: transactionBody({
        paymentRef: txRef,
        txStatus: settled ? 'SUCCESSFUL' : 'PENDING',
        txIsSucces: settled,
      }),
    };
  });
  bench.kyc.setHandler((request) => {
    const userRef = request.query.get('userRef') ?? '';
    const level = kycLevels.get(userRef);
    if (level === undefined)
      return { status: 404, body: { message: 'User not found', error: true } };
    return {
      body: kycBody({
        userRef,
        level,
        levels: [1, 2].map((n) => ({
          level: n,
          levelName: `Tier ${n}`,
          levelSlug: `tier_${n}`,
          status: level >= n,
          kyc: [],
        })),
      }),
    };
  });
  const env = {
    CACHE_URL: bench.redis.url,
    // Upstream calls are counted exactly: a Redis command a busy machine delays past the
    // default 250 ms would be served locally instead.
    CACHE_COMMAND_TIMEOUT_MS: '5000',
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_OLD_SECRETS: OLD_SECRET,
    WEBHOOK_POLL_BACKOFF: String(BACKOFF),
    LIVE_POLL_MS: String(POLL_MS),
    LIVE_HEARTBEAT_MS: '250',
    LIVE_MAX_PER_CALLER: '100',
    LOG_LEVEL: 'warn',
  };
  [a, b] = await Promise.all([
    spawnGateway(bench.upstreams, env),
    spawnGateway(bench.upstreams, env),
  ]);
  token = await testToken();
}, 30_000);

afterAll(async () => {
  await stopAllGateways();
  await bench?.close();
});

/** Upstream calls (both fixtures) while `action` runs, once its fetches have had time to land. */
async function upstreamCallsDuring(action: () => Promise<unknown>): Promise<number> {
  const before = bench.payment.fixture.requests.length + bench.kyc.requests.length;
  await action();
  await sleep(150);
  return bench.payment.fixture.requests.length + bench.kyc.requests.length - before;
}

describe.skipIf(skip)('POST /webhooks/* — two processes, one Redis', () => {
  it('401 with no upstream call: no signature, malformed, wrong key, tampered body, out of window', async () => {
    const body = JSON.stringify({ event: 'PAYMENT_SUCCESSFUL', data: { txRef: 'NT-HOOK401' } });
    const now = Math.floor(Date.now() / 1000);
    const refused: [string, string | null][] = [
      ['missing', null],
      ['empty', ''],
      ['no v1', `t=${now}`],
      ['no t', sign(body).replace(/^t=\d+,/, '')],
      ['not hex', `t=${now},v1=${'z'.repeat(64)}`],
      ['short', `t=${now},v1=abcd`],
      ['wrong key', sign(body, ['whsec_someone_else_0123456789'])],
      ['other body', sign(`${body} `)],
      ['other t', sign(body, [SECRET], now).replace(`t=${now}`, `t=${now - 1}`)],
      // Out of the 300 s window on either side, by a margin no busy machine eats into: a
      // signature only grows older while the test runs, and one an hour ahead stays ahead.
      ['301 s old', sign(body, [SECRET], now - 301)],
      ['an hour ahead', sign(body, [SECRET], now + 3600)],
    ];
    const calls = await upstreamCallsDuring(async () => {
      for (const [name, signature] of refused) {
        const answer = await notify(a, 'payment', body, signature);
        expect(answer.status, name).toBe(401);
        // Nothing of the request comes back.
        expect(answer.body).not.toContain('NT-HOOK401');
      }
    });
    expect(calls).toBe(0);
    expect(await a.metric('gateway_webhooks_total', { outcome: 'unsigned' })).toBe(6);
    expect(await a.metric('gateway_webhooks_total', { outcome: 'bad_signature' })).toBe(3);
    expect(await a.metric('gateway_webhooks_total', { outcome: 'expired' })).toBe(2);
    // A log line per refusal, with neither the body nor the signature.
    const refusals = a
      .output()
      .split('\n')
      .filter((line) => line.includes('webhook refused'));
    expect(refusals.length).toBeGreaterThanOrEqual(11);
    for (const line of refusals) {
      expect(line).not.toContain('NT-HOOK401');
      expect(line).not.toMatch(/v1=|[0-9a-f]{64}/);
      expect(line).not.toContain(SECRET);
    }
  });

  it('accepts the previous secret while keys rotate, and a header carrying both signatures', async () => {
    for (const [name, secrets] of [
      ['old only', [OLD_SECRET]],
      ['new and old', [SECRET, OLD_SECRET]],
      ['a stranger and the old', ['whsec_stranger_0123456789abcdef', OLD_SECRET]],
    ] as const) {
      const body = JSON.stringify({ txRef: 'NT-HOOKROTATE', id: name });
      expect((await notify(b, 'payment', body, sign(body, [...secrets]))).status, name).toBe(202);
    }
    // Their fetches land before the next test counts calls.
    await until(() => callsFor('NT-HOOKROTATE') >= 1, 2000);
    await sleep(300);
  });

  it('400 with no upstream call: not JSON, no reference, a malformed one', async () => {
    const bodies: [string, 'payment' | 'kyc', string][] = [
      ['not JSON', 'payment', '{"txRef": "NT-HOOK400"'],
      ['an array', 'payment', '["NT-HOOK400"]'],
      ['no txRef', 'payment', '{"event":"PAYMENT_SUCCESSFUL","data":{}}'],
      ['malformed txRef', 'payment', '{"txRef":"NT-../../admin"}'],
      ['txRef not a string', 'payment', '{"data":{"txRef":42}}'],
      ['userRef on the payment path', 'payment', '{"userRef":"user-1"}'],
      ['no userRef', 'kyc', '{"data":{"level":3}}'],
      ['userRef too long', 'kyc', JSON.stringify({ userRef: 'u'.repeat(129) })],
      ['control character', 'kyc', JSON.stringify({ userRef: 'user\u0000-1' })],
    ];
    const calls = await upstreamCallsDuring(async () => {
      for (const [name, source, body] of bodies) {
        expect((await notify(a, source, body)).status, name).toBe(400);
      }
    });
    expect(calls).toBe(0);
  });

  it('413 over 64 KiB, by Content-Length and by counting a chunked body, with no upstream call', async () => {
    const big = JSON.stringify({ txRef: 'NT-HOOK413', pad: 'x'.repeat(64 * 1024) });
    const calls = await upstreamCallsDuring(async () => {
      expect((await notify(a, 'payment', big)).status).toBe(413);
      const chunks = Array.from({ length: 80 }, (_, i) =>
        i === 0 ? '{"txRef":"NT-HOOK413","pad":"' : 'y'.repeat(1024),
      );
      expect(await notifyChunked(b, [...chunks, '"}'])).toBe(413);
    });
    expect(calls).toBe(0);
    // Exactly 64 KiB is within the limit.
    const prefix = '{"txRef":"NT-HOOKEDGE","pad":"';
    const edge = `${prefix}${'z'.repeat(64 * 1024 - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(edge)).toBe(64 * 1024);
    expect((await notify(a, 'payment', edge)).status).toBe(202);
  });

  it('202, then one fresh fetch; the same notification again is 200 and fetches nothing, on either replica', async () => {
    const txRef = `NT-HOOK202${Date.now()}`;
    const body = JSON.stringify({ event: 'PAYMENT_PENDING', data: { txRef } });
    const signature = sign(body);
    expect((await notify(a, 'payment', body, signature)).status).toBe(202);
    await until(() => callsFor(txRef) === 1, 2000);
    // The fetch skipped the cache and wrote it: a query now is a hit, no second call.
    const read = await query(a, `{ transaction(txRef: "${txRef}") { status } }`, token);
    expect(read.body.data).toEqual({ transaction: { status: 'PENDING' } });
    const calls = await upstreamCallsDuring(async () => {
      expect(await notify(a, 'payment', body, signature)).toEqual({
        status: 200,
        body: '{"status":"already accepted"}',
      });
      expect((await notify(b, 'payment', body, signature)).status).toBe(200);
      // A stray extra v1 does not make a recorded notification new.
      const padded = `${signature},v1=${'0'.repeat(64)}`;
      expect((await notify(b, 'payment', body, padded)).status).toBe(200);
    });
    expect(calls).toBe(0);
    expect(callsFor(txRef)).toBe(1);
    expect(
      (await a.metric('gateway_webhooks_total', { source: 'payment', outcome: 'replay' })) +
        (await b.metric('gateway_webhooks_total', { source: 'payment', outcome: 'replay' })),
    ).toBe(3);
    // A new notification (another t or body) for the same record is accepted: providers retry so.
    const again = JSON.stringify({ event: 'PAYMENT_PENDING', data: { txRef }, attempt: 2 });
    expect((await notify(b, 'payment', again)).status).toBe(202);
    await until(() => callsFor(txRef) === 2, 2000);
  });

  it('never takes the body as the record: a notification claiming FAILED gives the SUCCESSFUL the API says', async () => {
    const txRef = `NT-HOOKTRUST${Date.now()}`;
    settleAt.set(txRef, Date.now() + 60_000);
    const followers = [follow(a, txRef, token), follow(b, txRef, token)];
    await Promise.all(followers.map((f) => f.first));
    settleAt.set(txRef, Date.now());
    const lie = JSON.stringify({
      event: 'PAYMENT_FAILED',
      txRef,
      data: { txRef, txStatus: 'FAILED', txIsSucces: false, amount: 1, currency: 'USD' },
    });
    expect((await notify(a, 'payment', lie)).status).toBe(202);
    await Promise.race([Promise.all(followers.map((f) => f.done)), sleep(POLL_MS)]);
    for (const f of followers) {
      expect(f.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
      expect(f.completed).toBe(true);
    }
    const read = await query(
      b,
      `{ transaction(txRef: "${txRef}") { status amount currency } }`,
      token,
    );
    expect(read.body.data).toEqual({
      transaction: { status: 'SUCCESSFUL', amount: 1000.5, currency: 'NGN' },
    });
  });

  it('pushes to every subscriber of both replicas before the next poll could have happened', async () => {
    const txRef = `NT-HOOKPUSH${Date.now()}`;
    settleAt.set(txRef, Number.POSITIVE_INFINITY);
    const followers: Followed[] = Array.from({ length: 20 }, (_, i) =>
      follow(i % 2 ? b : a, txRef, token),
    );
    await Promise.all(followers.map((f) => f.first));
    // A first notification while PENDING: the record is covered; polls slow down by the factor.
    expect((await notify(a, 'payment', JSON.stringify({ txRef, n: 1 }))).status).toBe(202);
    await until(async () => callsFor(txRef) >= 2, 2000);
    const delayCount = async () =>
      (await a.metric('gateway_webhook_push_delay_seconds_count')) +
      (await b.metric('gateway_webhook_push_delay_seconds_count'));
    await until(async () => (await delayCount()) >= 20, 2000);

    await sleep(POLL_MS / 2);
    settleAt.set(txRef, Date.now());
    const callsBefore = callsFor(txRef);
    const polls = async () =>
      (await a.metric('gateway_live_polls_total')) + (await b.metric('gateway_live_polls_total'));
    const pollsBefore = await polls();
    const sent = Date.now();
    expect((await notify(b, 'payment', JSON.stringify({ txRef, n: 2 }))).status).toBe(202);
    await Promise.race([Promise.all(followers.map((f) => f.done)), sleep(POLL_MS * 2)]);
    const took = Date.now() - sent;
    console.info(
      `[webhooks] 20 subscribers over 2 processes: all had SUCCESSFUL ${took} ms after the notification (poll interval ${POLL_MS} ms × ${BACKOFF})`,
    );
    for (const f of followers) {
      expect(f.errors).toEqual([]);
      expect(f.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
      expect(f.completed).toBe(true);
    }
    // Within one poll interval, and with no poll at all: one upstream call, the notification's.
    expect(took).toBeLessThan(POLL_MS);
    expect(callsFor(txRef) - callsBefore).toBe(1);
    expect(await polls()).toBe(pollsBefore);
    expect(await delayCount()).toBeGreaterThanOrEqual(40);
  });

  it('1,000 notifications for one reference over both replicas: at most one upstream call in flight', async () => {
    const txRef = `${DELAYED}${Date.now()}`;
    const answers: number[] = [];
    const started = Date.now();
    let next = 0;
    // 40 senders at once, each notification distinct (not a replay), half to each replica.
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        while (next < 1000) {
          const n = next;
          next += 1;
          const answer = await notify(n % 2 ? b : a, 'payment', JSON.stringify({ txRef, n }));
          answers.push(answer.status);
        }
      }),
    );
    const sending = Date.now() - started;
    expect(answers).toHaveLength(1000);
    expect(answers.every((status) => status === 202)).toBe(true);
    // The last notifications' trailing fetch lands.
    await until(() => (inFlight.now.get(txRef) ?? 0) === 0, 2000);
    await sleep(300);
    const calls = callsFor(txRef);
    console.info(
      `[webhooks] 1,000 notifications for one reference in ${sending} ms: ${calls} upstream calls, at most ${inFlight.max.get(txRef)} in flight (each takes 50 ms)`,
    );
    expect(inFlight.max.get(txRef)).toBe(1);
    expect(calls).toBeGreaterThanOrEqual(1);
    // One fetch at a time, each taking 50 ms, over the sending time (and a trailing one).
    expect(calls).toBeLessThanOrEqual(Math.ceil(sending / 50) + 2);
  });

  it('loses no notification when the replica that was fetching died holding the record', async () => {
    const txRef = `NT-HOOKDEAD${Date.now()}`;
    // A holder that died mid-fetch: its lease stays until it lapses (1 s here).
    await bench.redis.command(['SET', `gw:{webhook:payment:${txRef}}`, 'dead', 'PX', '1000']);
    const sent = Date.now();
    expect((await notify(a, 'payment', JSON.stringify({ txRef }))).status).toBe(202);
    await until(() => callsFor(txRef) === 1, 4000);
    // Taken over once the lock expired, not before (the dead holder might still have been alive).
    expect(Date.now() - sent).toBeGreaterThanOrEqual(900);
  });

  it('kycStatus: emits at once, then the new level a KYC notification announces; FORBIDDEN for another user', async () => {
    const userRef = `usr_hook_${Date.now()}`;
    kycLevels.set(userRef, 1);
    // End users' tokens (no scope): their own KYC only.
    const own = await testToken(userRef, '');
    const other = await testToken('usr_someone_else', '');

    // Another user's sub: FORBIDDEN, and no upstream call.
    const before = kycCalls(userRef);
    const refused = await collectKyc(a, userRef, other, 1);
    expect(refused.errors.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    expect(refused.levels).toEqual([]);
    expect(kycCalls(userRef)).toBe(before);

    const watching = collectKyc(b, userRef, own, 2);
    await until(() => kycCalls(userRef) >= 1, 2000);
    await sleep(200);
    kycLevels.set(userRef, 2);
    const sent = Date.now();
    expect((await notify(a, 'kyc', JSON.stringify({ data: { userRef, level: 99 } }))).status).toBe(
      202,
    );
    const seen = await watching;
    expect(seen.errors).toEqual([]);
    expect(seen.levels).toEqual([1, 2]);
    expect(Date.now() - sent).toBeLessThan(POLL_MS);
  });
});

interface KycSeen {
  levels: number[];
  errors: { message: string; extensions?: { code?: unknown } }[];
}

/** Follows `kycStatus` until `count` results or an error. */
function collectKyc(
  gateway: { url: string },
  userRef: string,
  bearer: string,
  count: number,
): Promise<KycSeen> {
  const client = createSseClient({
    url: `${gateway.url}/graphql`,
    headers: { authorization: `Bearer ${bearer}` },
    retryAttempts: 0,
  });
  const seen: KycSeen = { levels: [], errors: [] };
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(), 8000);
    const finish = () => {
      clearTimeout(timer);
      dispose();
      client.dispose();
      resolve(seen);
    };
    const dispose = client.subscribe<{ kycStatus: { level: number } }>(
      {
        query: 'subscription($u: ID!) { kycStatus(userRef: $u) { userRef level verified } }',
        variables: { u: userRef },
      },
      {
        next: (result) => {
          if (result.data?.kycStatus) seen.levels.push(result.data.kycStatus.level);
          if (result.errors) seen.errors.push(...(result.errors as unknown as KycSeen['errors']));
          if (seen.levels.length >= count || result.errors) finish();
        },
        error: () => finish(),
        complete: () => finish(),
      },
    );
  });
}

describe('without WEBHOOK_SECRET, and kycStatus at the watch time (one in-process gateway)', () => {
  it('answers 404 on both paths, signed or not', async () => {
    const upstream = await startFixture(() => ({ body: transactionBody() }));
    const gateway = await startGateway({ paymentUrl: upstream.url, kycUrl: upstream.url });
    try {
      const body = JSON.stringify({ txRef: 'NT-HOOK404' });
      expect((await notify(gateway, 'payment', body)).status).toBe(404);
      expect((await notify(gateway, 'kyc', JSON.stringify({ userRef: 'u1' }))).status).toBe(404);
      expect(upstream.requests).toHaveLength(0);
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });

  it('keeps WEBHOOK_SECRET out of every log line, metric and answer; refuses a short one at start', async () => {
    const upstream = await startFixture((request) => ({
      body: transactionBody({ paymentRef: request.path }),
    }));
    const logLines: string[] = [];
    const gateway = await startGateway(
      { paymentUrl: upstream.url, kycUrl: upstream.url },
      { WEBHOOK_SECRET: SECRET, WEBHOOK_OLD_SECRETS: OLD_SECRET },
      { logLines },
    );
    try {
      const body = JSON.stringify({ txRef: 'NT-HOOKSECRET' });
      const answers = [
        await notify(gateway, 'payment', body),
        await notify(gateway, 'payment', body, sign(body, [OLD_SECRET], 1)),
        await notify(gateway, 'payment', body, sign(body, ['whsec_wrong_0123456789abcdef'])),
        await notify(gateway, 'payment', '{', sign('{')),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([202, 401, 401, 400]);
      await until(() => upstream.requests.length === 1, 2000);
      const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
      for (const text of [...logLines, metrics, ...answers.map((answer) => answer.body)]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain(OLD_SECRET);
      }
      expect(logLines.some((line) => line.includes('webhook refused'))).toBe(true);
    } finally {
      await gateway.close();
      await upstream.close();
    }
    // Sandbox mode: no other setting is required, so the webhook settings are what is judged.
    const base = {};
    expect(() => loadConfig({ ...base, WEBHOOK_SECRET: 'short-secret' })).toThrow(
      /^WEBHOOK_SECRET: must be at least 16 bytes/,
    );
    try {
      loadConfig({ ...base, WEBHOOK_SECRET: 'short-secret' });
    } catch (error) {
      expect(String(error)).not.toContain('short-secret');
    }
    expect(() => loadConfig({ ...base, WEBHOOK_OLD_SECRETS: OLD_SECRET })).toThrow(
      /^WEBHOOK_OLD_SECRETS: needs WEBHOOK_SECRET/,
    );
  });

  it('kycStatus completes with no error when the watch time ends', async () => {
    const upstream = await startFixture((request) => ({
      body: kycBody({ userRef: request.query.get('userRef') }),
    }));
    const gateway = await startGateway(
      { paymentUrl: upstream.url, kycUrl: upstream.url },
      { LIVE_MAX_WATCH_SECONDS: '1', LIVE_POLL_MS: '200' },
    );
    try {
      const client = createSseClient({
        url: `${gateway.url}/graphql`,
        headers: { authorization: `Bearer ${await gateway.token({ sub: 'user-1', scope: null })}` },
        retryAttempts: 0,
      });
      const started = Date.now();
      const outcome = await new Promise<{ results: number; error?: unknown }>((resolve) => {
        let results = 0;
        client.subscribe(
          { query: 'subscription { kycStatus(userRef: "user-1") { level } }' },
          {
            next: (result) => {
              if (result.errors) resolve({ results, error: result.errors });
              results += 1;
            },
            error: (error) => resolve({ results, error }),
            complete: () => resolve({ results }),
          },
        );
      });
      client.dispose();
      expect(outcome).toEqual({ results: 1 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});
