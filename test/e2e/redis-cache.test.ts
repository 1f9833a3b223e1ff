/**
 * Scale-out on Redis, with real processes: two `node src/main.ts` gateways share one
 * real redis-server and one fixture payment upstream that counts its calls. The shared cache
 * (across processes and restarts, keys without personal data), single flight across processes,
 * and rate-limit counters shared by both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, kycBody, startFixture, transactionBody } from '../helpers/fixture.ts';
import { KYC_SECRET, PAYMENT_TOKEN } from '../helpers/gateway.ts';
import {
  type GatewayProcess,
  query,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';

const skip = skipRedisTests('redis-cache');

let redis: TestRedis;
let payment: Fixture;
let kyc: Fixture;

/** Calls the payment upstream received for one reference. */
const callsFor = (txRef: string) =>
  payment.requests.filter((request) => request.path.endsWith(`/${txRef}`)).length;

const upstreams = () => ({ paymentUrl: payment.url, kycUrl: kyc.url });

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  payment = await startFixture((request) => {
    const txRef = request.path.split('/').pop() ?? '';
    // Raw JSON text, so that the amounts are exactly these digits.
    if (txRef.startsWith('NT-EXACT')) {
      return { headers: { 'content-type': 'application/json' }, body: EXACT_BODY };
    }
    // A slow upstream, so that concurrent misses really overlap.
    const delayMs = txRef.startsWith('NT-SLOW') ? 800 : 0;
    return { body: transactionBody({ paymentRef: txRef }), delayMs };
  });
  kyc = await startFixture((request) => ({
    body: kycBody({ userRef: request.query.get('userRef'), name: 'Private Person' }),
  }));
});

afterAll(async () => {
  await stopAllGateways();
  await payment?.close();
  await kyc?.close();
  await redis?.stop();
});

const TX = (txRef: string) => `{ transaction(txRef: "${txRef}") { txRef status amount } }`;

const EXACT_BODY =
  '{"event":"PAYMENT_SUCCESSFUL","data":{"txStatus":"Succeeded","currency":"KWD",' +
  '"amount": 10.125, "appFee": 12345678901234567.891, "merchantFee": "0.0005",' +
  '"txTimestamp":"Jan 5, 2024, 3:04:05 PM","card":{"first":"4111111111111111","expiry":"1/30"}}}';
const MONEY = 'amount currency minorUnits amountMinor';
const EXACT = (txRef: string) =>
  `{ transaction(txRef: "${txRef}") { status rawStatus amount appFee timestamp
    amountMoney { ${MONEY} } appFeeMoney { ${MONEY} } merchantFeeMoney { ${MONEY} }
    card { first6 last4 masked expiryMonth expiryYear } } }`;

/**
 * The gateways' Redis settings. The command timeout (250 ms by default) is raised: these tests
 * count upstream calls exactly, and a command that a busy machine delays past the timeout is
 * served locally (one more upstream call), which redis-outage.test.ts tests on purpose.
 */
const shared = () => ({ CACHE_URL: redis.url, CACHE_COMMAND_TIMEOUT_MS: '5000' });

describe.skipIf(skip)('two gateway processes sharing one Redis', () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  let token: string;

  beforeAll(async () => {
    [a, b] = await Promise.all([
      spawnGateway(upstreams(), shared()),
      spawnGateway(upstreams(), shared()),
    ]);
    token = await testToken();
  });

  it('the second process answers a cached final transaction with zero upstream calls, and so does a restarted first', async () => {
    const txRef = `NT-SHARED${Date.now()}`;
    const expected = { data: { transaction: { txRef, status: 'SUCCESSFUL', amount: 1000.5 } } };
    expect((await query(a, TX(txRef), token)).body).toEqual(expected);
    expect(callsFor(txRef)).toBe(1);

    expect((await query(b, TX(txRef), token)).body).toEqual(expected);
    expect(callsFor(txRef)).toBe(1);

    // The entry is plain JSON under a namespaced key, after its order (`m:<fetchedAt>|`),
    // kept for TTL + stale window (24 h + 7 d).
    const key = `gw:cache:tx:v4:${txRef}`;
    const held = String(await redis.command(['GET', key]));
    expect(held).toMatch(/^m:\d{13}\|\{/);
    const stored = JSON.parse(held.replace(/^m:\d+\|/, '')) as {
      value: { value: { paymentRef: string }; storedAt: number; freshUntil: number };
    };
    expect(stored.value.value.paymentRef).toBe(txRef);
    expect(stored.value.freshUntil - stored.value.storedAt).toBe(86_400_000);
    const pttl = Number(await redis.command(['PTTL', key]));
    expect(pttl).toBeGreaterThan((86_400 + 604_800) * 1000 - 60_000);
    expect(pttl).toBeLessThanOrEqual((86_400 + 604_800) * 1000);

    // A graceful stop closes its Redis connections and exits 0; the new process reads the
    // value the old one stored.
    expect(await a.stop('SIGTERM')).toBe(0);
    a = await spawnGateway(upstreams(), shared());
    expect((await query(a, TX(txRef), token)).body).toEqual(expected);
    expect(callsFor(txRef)).toBe(1);
  });

  it('serves a record normalized by one process from Redis to the other, exactly as it was', async () => {
    const txRef = `NT-EXACT${Date.now()}`;
    const first = await query(a, EXACT(txRef), token);
    expect(first.body).toEqual({
      data: {
        transaction: {
          status: 'SUCCESSFUL',
          rawStatus: 'Succeeded',
          amount: 10.125,
          appFee: 12345678901234568,
          timestamp: '2024-01-05T15:04:05.000Z',
          amountMoney: { amount: '10.125', currency: 'KWD', minorUnits: 3, amountMinor: '10125' },
          appFeeMoney: {
            amount: '12345678901234567.891',
            currency: 'KWD',
            minorUnits: 3,
            amountMinor: '12345678901234567891',
          },
          merchantFeeMoney: { amount: '0.0005', currency: 'KWD', minorUnits: 3, amountMinor: '1' },
          card: { first6: '411111', last4: null, masked: null, expiryMonth: 1, expiryYear: 2030 },
        },
      },
    });
    expect((await query(b, EXACT(txRef), token)).body).toEqual(first.body);
    expect(callsFor(txRef)).toBe(1);

    // What Redis holds is the normalized record, as JSON, its amounts exactly as the upstream
    // wrote them (here as their digits: the body holds a number of more than 15 digits, so each
    // amount was read from its text): on a hit only the Money fields asked for are written out.
    const held = String(await redis.command(['GET', `gw:cache:tx:v4:${txRef}`]));
    const stored = JSON.parse(held.replace(/^m:\d+\|/, '')) as {
      value: { value: Record<string, unknown> };
    };
    expect(stored.value.value).toMatchObject({
      status: 'SUCCESSFUL',
      timestamp: '2024-01-05T15:04:05.000Z',
      amountExact: '10.125',
      appFeeExact: '12345678901234567.891',
      merchantFeeExact: '0.0005',
      card: { first6: '411111', expiryYear: 2030 },
    });
    expect(JSON.stringify(stored)).not.toContain('4111111111111111');
  });

  it('keeps no personal data or credential in clear in its keys', async () => {
    const userRef = 'usr-PRIVATE-4711';
    const kycAnswer = await query(a, `{ kycUser(userRef: "${userRef}") { level } }`, token);
    expect(kycAnswer.body).toEqual({ data: { kycUser: { level: 1 } } });
    await query(b, `{ kycUser(userRef: "${userRef}") { level } }`, token);
    expect(kyc.requests).toHaveLength(1);

    const keys = (await redis.command(['KEYS', '*'])) as string[];
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key.startsWith('gw:')).toBe(true);
      for (const secret of [
        userRef,
        'Private Person',
        'test-merchant',
        PAYMENT_TOKEN,
        KYC_SECRET,
      ]) {
        expect(key).not.toContain(secret);
      }
    }
    expect(keys.filter((key) => key.startsWith('gw:cache:kyc:'))).toEqual([
      expect.stringMatching(/^gw:cache:kyc:v4:[A-Za-z0-9_-]{43}$/),
    ]);
  });

  it('makes one upstream call for 100 concurrent misses of one reference spread over both processes', async () => {
    const txRef = `NT-SLOW${Date.now()}`;
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => query(i % 2 === 0 ? a : b, TX(txRef), token)),
    );
    const elapsed = performance.now() - started;
    for (const answer of answers) {
      expect(answer.body).toEqual({
        data: { transaction: { txRef, status: 'SUCCESSFUL', amount: 1000.5 } },
      });
    }
    console.info(
      `[redis-cache] stampede: 100 requests over 2 processes, ${callsFor(txRef)} upstream call(s), ${Math.round(elapsed)} ms`,
    );
    expect(callsFor(txRef)).toBe(1);
  });
});

describe.skipIf(skip)('rate limits shared through Redis', () => {
  it('allows a caller its burst once across two processes, not once per process', async () => {
    const env = {
      ...shared(),
      SERVICE_RATE_LIMIT_RPS: '1',
      SERVICE_RATE_LIMIT_BURST: '6',
    };
    const [c, d] = await Promise.all([
      spawnGateway(upstreams(), env),
      spawnGateway(upstreams(), env),
    ]);
    const sub = `limited-caller-${Date.now()}`;
    const token = await testToken(sub);
    // Twelve at once, six to each process.
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        query(i % 2 === 0 ? c : d, '{ gatewayInfo { version } }', token),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    const allowed = statuses.filter((status) => status === 200).length;
    // Six from the burst, and one more for each second the twelve took (one a second refills):
    // in memory it would be twelve.
    const seconds = Math.ceil((performance.now() - started) / 1000);
    expect(allowed).toBeGreaterThanOrEqual(6);
    expect(allowed).toBeLessThanOrEqual(Math.min(6 + seconds, 11));
    expect(statuses.filter((status) => status === 429).length).toBe(12 - allowed);
    for (const answer of answers.filter((a) => a.status === 429)) {
      expect(JSON.stringify(answer.body)).toContain('RATE_LIMITED');
    }

    // Another caller has its own bucket.
    const other = await query(d, '{ gatewayInfo { version } }', await testToken(`${sub}-other`));
    expect(other.status).toBe(200);
    // The bucket's key does not name the caller.
    const keys = (await redis.command(['KEYS', 'gw:rl:*'])) as string[];
    expect(keys.length).toBeGreaterThanOrEqual(2);
    for (const key of keys) expect(key).not.toContain('limited-caller');
  });
});
