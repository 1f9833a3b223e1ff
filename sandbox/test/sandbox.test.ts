/**
 * The built-in sandbox, through real HTTP on loopback: every demo and failure
 * reference of both interfaces, authentication, the KYC store, and shutdown.
 */
import { Agent, get as httpGet, type IncomingMessage } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../index.ts';

const TOKEN = 'test-payment-token';
const SECRET = 'test-kyc-secret';
const SLUG = 'test-business';
const SLOW_MS = 150;
const PENDING_SECONDS = 8;

// Month, day, year, 12-hour time; Intl puts U+202F before AM/PM, others a plain space.
const PAYMENT_TIME =
  /^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}, \d{4}, (1[0-2]|[1-9]):[0-5]\d:[0-5]\d[ \u202f](AM|PM)$/;
const KYC_TIME = /^\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2}$/;

const DATA_FIELDS = [
  'amount',
  'appFee',
  'merchantFee',
  'txIsSucces',
  'currency',
  'checkoutPoint',
  'paymentRef',
  'merchantRef',
  'paymentChannel',
  'deviceFingerPrint',
  'message',
  'txStatus',
  'txTimestamp',
];

type Json = Record<string, unknown>;

let clock = Date.parse('2025-03-01T10:00:00Z');
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({
    paymentAccessToken: TOKEN,
    kycSecretKey: SECRET,
    kycPublicKey: 'pk_test',
    kycBusinessSlug: SLUG,
    pendingSeconds: PENDING_SECONDS,
    slowMs: SLOW_MS,
    now: () => clock,
  });
});

afterAll(async () => {
  await sandbox.close();
});

function pay(
  txRef: string,
  init: { token?: string | null; method?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? TOKEN : init.token;
  if (token !== null) {
    headers.authorization = `Bearer ${token}`;
  }
  return fetch(`${sandbox.paymentUrl}/pg/api/v1/transaction/status/${txRef}`, {
    method: init.method ?? 'GET',
    headers,
  });
}

function kyc(
  userRef: string | null,
  init: { secret?: string | null; slug?: string | null; base?: Sandbox } = {},
): Promise<Response> {
  const base = init.base ?? sandbox;
  const params = new URLSearchParams();
  if (userRef !== null) params.set('userRef', userRef);
  const slug = init.slug === undefined ? SLUG : init.slug;
  if (slug !== null) params.set('slug', slug);
  const secret = init.secret === undefined ? SECRET : init.secret;
  return fetch(`${base.kycUrl}/api/v1/user/kyc?${params}`, {
    headers: secret === null ? {} : { 'x-secret-key': secret },
  });
}

async function json(res: Response): Promise<Json> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as Json;
}

async function record(txRef: string): Promise<{ event: unknown; data: Json }> {
  const res = await pay(txRef);
  expect(res.status).toBe(200);
  const body = await json(res);
  return { event: body.event, data: body.data as Json };
}

describe('payment interface: demo references', () => {
  it('NT-SUCCESS001 carries every field of the documented record', async () => {
    const { event, data } = await record('NT-SUCCESS001');
    expect(event).toBe('PAYMENT_SUCCESSFUL');
    for (const field of DATA_FIELDS) {
      expect(data).toHaveProperty(field);
    }
    expect(data).toMatchObject({
      amount: 15000.5,
      appFee: 225.01,
      merchantFee: 75.25,
      txIsSucces: true,
      currency: 'NGN',
      paymentChannel: 'Card',
      txStatus: 'SUCCESSFUL',
      txTimestamp: 'Jan 5, 2024, 3:04:05 PM',
      customer: {
        fullname: 'Adaeze Okafor',
        phone: '2348012345678',
        joinedAt: 'Mar 14, 2023, 9:26:53 AM',
      },
    });
    const card = data.card as Json;
    expect(Object.keys(card).sort()).toEqual(['cardType', 'expiry', 'first', 'last']);
    expect(card.first).toMatch(/^\d{6}$/);
    expect(card.last).toMatch(/^\d{4}$/);
    expect(card.expiry).toMatch(/^(0[1-9]|1[0-2])\/\d{2}$/);
    expect(card.cardType).toBe('Visa');
  });

  it('NT-FAILED001 is FAILED with customer, card and a message', async () => {
    const { event, data } = await record('NT-FAILED001');
    expect(event).toBe('PAYMENT_FAILED');
    expect(data).toMatchObject({
      txStatus: 'FAILED',
      txIsSucces: false,
      message: 'Insufficient funds',
    });
    expect(data.customer).toBeTypeOf('object');
    expect(data.card).toBeTypeOf('object');
    expect(data.txTimestamp).toBe('Feb 29, 2024, 11:59:59 PM');
  });

  it('NT-NOCARD001 has no customer and no card key at all', async () => {
    const { data } = await record('NT-NOCARD001');
    expect(data).toMatchObject({
      txStatus: 'SUCCESSFUL',
      txIsSucces: true,
      paymentChannel: 'BankTransfer',
    });
    expect(data).not.toHaveProperty('customer');
    expect(data).not.toHaveProperty('card');
    expect(data.txTimestamp).toBe('Dec 31, 2023, 12:30:00 AM');
  });

  it('NT-ODDSTATUS001 has a status the gateway does not know', async () => {
    const { event, data } = await record('NT-ODDSTATUS001');
    expect(event).toBe('PAYMENT_REVERSED');
    expect(data.txStatus).toBe('REVERSED');
  });

  it('NT-STRINGS001 sends numbers as strings and extra fields', async () => {
    const res = await pay('NT-STRINGS001');
    const body = await json(res);
    const data = body.data as Json;
    expect(data).toMatchObject({
      amount: '2500.00',
      appFee: '37.50',
      merchantFee: '12.49',
      txStatus: 'SUCCESSFUL',
    });
    expect(body).toHaveProperty('requestId');
    expect(data).toHaveProperty('settlementBatch');
    expect(data.card).toHaveProperty('issuer');
  });

  it('NT-USD001 is USD 19.99 on a Mastercard, time written the Intl way', async () => {
    const { data } = await record('NT-USD001');
    expect(data).toMatchObject({
      amount: 19.99,
      currency: 'USD',
      card: { cardType: 'Mastercard' },
    });
    expect(data.txTimestamp).toBe('Nov 3, 2024, 1:02:03\u202fPM');
  });

  it('every demo timestamp has the documented form', async () => {
    for (const ref of [
      'NT-SUCCESS001',
      'NT-FAILED001',
      'NT-PENDING001',
      'NT-NOCARD001',
      'NT-ODDSTATUS001',
      'NT-STRINGS001',
      'NT-USD001',
      'NT-GEN1',
      'NT-GENzz9',
    ]) {
      const { data } = await record(ref);
      expect(data.txTimestamp, ref).toMatch(PAYMENT_TIME);
      const customer = data.customer as Json | undefined;
      if (customer !== undefined) {
        expect(customer.joinedAt, ref).toMatch(PAYMENT_TIME);
      }
    }
  });

  it('NT-GEN… records are deterministic and vary with the reference', async () => {
    const a1 = await record('NT-GEN42');
    const a2 = await record('NT-GEN42');
    const b = await record('NT-GEN43');
    expect(a1).toEqual(a2);
    expect(a1.data.amount).not.toBe(b.data.amount);
    expect(a1.data.txStatus).toBe('SUCCESSFUL');
    for (const { data } of [a1, b]) {
      const cents = (data.amount as number) * 100;
      expect(Math.abs(cents - Math.round(cents))).toBeLessThan(1e-6);
    }
  });

  it('NT-PENDING… turns SUCCESSFUL pendingSeconds after its own first request', async () => {
    const first = await record('NT-PENDINGab12');
    expect(first.event).toBe('PAYMENT_PENDING');
    expect(first.data).toMatchObject({ txStatus: 'PENDING', txIsSucces: false });

    clock += PENDING_SECONDS * 1000 - 1;
    expect((await record('NT-PENDINGab12')).data.txStatus).toBe('PENDING');
    // A reference first asked now has a clock of its own.
    expect((await record('NT-PENDINGcd34')).data.txStatus).toBe('PENDING');

    clock += 1;
    const settled = await record('NT-PENDINGab12');
    expect(settled.event).toBe('PAYMENT_SUCCESSFUL');
    expect(settled.data).toMatchObject({ txStatus: 'SUCCESSFUL', txIsSucces: true });
    expect((await record('NT-PENDINGcd34')).data.txStatus).toBe('PENDING');
  });
});

describe('payment interface: authentication and routing', () => {
  it('refuses a missing, wrong or non-Bearer token with 401 and never echoes it', async () => {
    for (const res of [
      await pay('NT-SUCCESS001', { token: null }),
      await pay('NT-SUCCESS001', { token: 'wrong-token-value' }),
      await fetch(`${sandbox.paymentUrl}/pg/api/v1/transaction/status/NT-SUCCESS001`, {
        headers: { authorization: `Basic ${TOKEN}` },
      }),
    ]) {
      expect(res.status).toBe(401);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ message: 'Unauthorized', error: true });
      expect(text).not.toContain('wrong-token-value');
      expect(text).not.toContain(TOKEN);
    }
  });

  it('answers 404 for an unknown or malformed reference and for other paths', async () => {
    for (const ref of ['NT-UNKNOWN1', 'NT-bad_ref', 'XX-SUCCESS001', 'NT-GEN']) {
      const res = await pay(ref);
      expect(res.status, ref).toBe(404);
      expect(await json(res)).toEqual({ message: 'Transaction not found', error: true });
    }
    const other = await fetch(`${sandbox.paymentUrl}/pg/api/v2/whatever`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(other.status).toBe(404);
    await other.body?.cancel();
  });

  it('answers 405 for a method other than GET', async () => {
    const res = await pay('NT-SUCCESS001', { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    await res.body?.cancel();
  });

  it('records every request, credentials as sent', async () => {
    const before = sandbox.requests.length;
    await (await pay('NT-SUCCESS001')).text();
    await (await kyc('usr_demo_new')).text();
    const [p, k] = sandbox.requests.slice(before);
    expect(p).toMatchObject({
      service: 'payment',
      method: 'GET',
      path: '/pg/api/v1/transaction/status/NT-SUCCESS001',
      body: '',
    });
    expect(p?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(k).toMatchObject({
      service: 'kyc',
      path: '/api/v1/user/kyc',
      query: { userRef: 'usr_demo_new', slug: SLUG },
    });
    expect(k?.headers['x-secret-key']).toBe(SECRET);
  });

  it('keeps connections alive between requests', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const once = (): Promise<IncomingMessage & { reused: boolean }> =>
      new Promise((resolve, reject) => {
        const req = httpGet(
          `${sandbox.paymentUrl}/pg/api/v1/transaction/status/NT-SUCCESS001`,
          { agent, headers: { authorization: `Bearer ${TOKEN}` } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(Object.assign(res, { reused: req.reusedSocket })));
          },
        );
        req.on('error', reject);
      });
    try {
      const first = await once();
      const second = await once();
      expect(first.statusCode).toBe(200);
      expect(second.statusCode).toBe(200);
      expect(second.reused).toBe(true);
    } finally {
      agent.destroy();
    }
  });
});

describe('payment interface: failure references', () => {
  it('NT-SLOW001 answers a good record after slowMs', async () => {
    const started = performance.now();
    const { data } = await record('NT-SLOW001');
    expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_MS - 5);
    expect(data.txStatus).toBe('SUCCESSFUL');
  });

  it('NT-ERROR500/502/503 answer server errors', async () => {
    const e500 = await pay('NT-ERROR500');
    expect(e500.status).toBe(500);
    expect(await json(e500)).toMatchObject({ error: true });

    const e502 = await pay('NT-ERROR502');
    expect(e502.status).toBe(502);
    expect(e502.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await e502.text()).toContain('<html>');

    for (let i = 0; i < 2; i++) {
      const e503 = await pay('NT-ERROR503');
      expect(e503.status).toBe(503);
      await e503.body?.cancel();
    }
  });

  it('NT-FLAKY… fails once with 503, then answers the record', async () => {
    const first = await pay('NT-FLAKY1');
    expect(first.status).toBe(503);
    await first.body?.cancel();
    expect((await record('NT-FLAKY1')).data.txStatus).toBe('SUCCESSFUL');
    expect((await record('NT-FLAKY1')).data.txStatus).toBe('SUCCESSFUL');
    const other = await pay('NT-FLAKY2');
    expect(other.status).toBe(503);
    await other.body?.cancel();
  });

  it('NT-RATELIMIT001/002/003 answer 429 with and without Retry-After', async () => {
    const r1 = await pay('NT-RATELIMIT001');
    expect(r1.status).toBe(429);
    expect(r1.headers.get('retry-after')).toBe('30');
    await r1.body?.cancel();

    const r2 = await pay('NT-RATELIMIT002');
    expect(r2.status).toBe(429);
    expect(r2.headers.get('retry-after')).toBeNull();
    await r2.body?.cancel();

    const r3 = await pay('NT-RATELIMIT003');
    expect(r3.status).toBe(429);
    expect(r3.headers.get('retry-after')).toBe('1');
    await r3.body?.cancel();
    expect((await record('NT-RATELIMIT003')).data.txStatus).toBe('SUCCESSFUL');
  });

  it('NT-NOTJSON001, NT-BADSHAPE001, NT-NODATA001 answer 200 with unusable bodies', async () => {
    const html = await pay('NT-NOTJSON001');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await html.text()).toMatch(/^<html>.*<\/html>$/s);

    const bad = await pay('NT-BADSHAPE001');
    expect(bad.status).toBe(200);
    expect((await json(bad)).data).toEqual({ amount: 'lots', txStatus: 7 });

    const noData = await pay('NT-NODATA001');
    expect(noData.status).toBe(200);
    expect(await json(noData)).toEqual({ event: 'X' });
  });

  it('NT-RESET001 resets the connection', async () => {
    await expect(pay('NT-RESET001')).rejects.toThrow();
    // The server keeps serving afterwards.
    expect((await record('NT-SUCCESS001')).data.txStatus).toBe('SUCCESSFUL');
  });

  it('NT-UNAUTH001 and NT-FORBID001 refuse the right token', async () => {
    const unauth = await pay('NT-UNAUTH001');
    expect(unauth.status).toBe(401);
    expect(await json(unauth)).toEqual({ message: 'Unauthorized', error: true });
    const forbid = await pay('NT-FORBID001');
    expect(forbid.status).toBe(403);
    expect(await json(forbid)).toMatchObject({ error: true });
  });

  it('NT-ECHO001 echoes the request headers, the token included', async () => {
    const res = await pay('NT-ECHO001');
    expect(res.status).toBe(500);
    expect(await res.text()).toContain(`Bearer ${TOKEN}`);
  });
});

describe('KYC interface', () => {
  it('refuses a missing or wrong secret key with 401', async () => {
    for (const secret of [null, 'nope']) {
      const res = await kyc('usr_demo_tier1', { secret });
      expect(res.status).toBe(401);
      expect(await json(res)).toEqual({ message: 'Invalid secret key', error: true, data: null });
    }
  });

  it('answers 400 for a wrong or missing slug and a missing userRef', async () => {
    for (const slug of ['other-business', null]) {
      const res = await kyc('usr_demo_tier1', { slug });
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual({
        message: 'Invalid business slug',
        error: true,
        data: null,
      });
    }
    const res = await kyc(null);
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ error: true, data: null });
  });

  it('answers 404 for an unknown user, 404/405 for other paths and methods', async () => {
    const res = await kyc('usr_nobody');
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ message: 'User not found', error: true, data: null });

    const other = await fetch(`${sandbox.kycUrl}/api/v1/user/?userRef=usr_demo_new&slug=${SLUG}`, {
      headers: { 'x-secret-key': SECRET },
    });
    expect(other.status).toBe(404);
    await other.body?.cancel();
    const post = await fetch(`${sandbox.kycUrl}/api/v1/user/kyc`, {
      method: 'POST',
      headers: { 'x-secret-key': SECRET },
    });
    expect(post.status).toBe(405);
    await post.body?.cancel();
  });

  it('usr_demo_new has three unverified levels and no checks', async () => {
    const body = await json(await kyc('usr_demo_new'));
    expect(body).toMatchObject({ message: 'KYC details retrieved successfully', error: false });
    const data = body.data as Json;
    expect(data).toMatchObject({ userRef: 'usr_demo_new', status: false, level: 0 });
    expect(data.levels).toEqual([
      { level: 1, levelName: 'Basic', levelSlug: 'tier_1', status: false, kyc: [] },
      { level: 2, levelName: 'Intermediate', levelSlug: 'tier_2', status: false, kyc: [] },
      { level: 3, levelName: 'Advanced', levelSlug: 'tier_3', status: false, kyc: [] },
    ]);
  });

  it('usr_demo_tier1 has a verified tier_1 with a gender check', async () => {
    const data = (await json(await kyc('usr_demo_tier1'))).data as Json;
    expect(data).toMatchObject({ level: 1, status: false });
    const [t1, t2, t3] = data.levels as Json[];
    expect(t1).toMatchObject({ levelSlug: 'tier_1', status: true });
    expect(t1?.kyc).toContainEqual(
      expect.objectContaining({
        name: 'gender',
        status: true,
        query: { gender: 'female' },
        result: {},
      }),
    );
    expect(t2).toMatchObject({ levelSlug: 'tier_2', status: false, kyc: [] });
    expect(t3).toMatchObject({ levelSlug: 'tier_3', status: false, kyc: [] });
  });

  it('usr_demo_tier3 is fully verified with three checks per level', async () => {
    const data = (await json(await kyc('usr_demo_tier3'))).data as Json;
    expect(data).toMatchObject({ level: 3, status: true });
    const levels = data.levels as Json[];
    expect(levels).toHaveLength(3);
    for (const level of levels) {
      expect(level.status).toBe(true);
      const checks = level.kyc as Json[];
      expect(checks).toHaveLength(3);
      for (const check of checks) {
        expect(check.createdAt).toMatch(KYC_TIME);
        expect(check.updatedAt).toMatch(KYC_TIME);
        expect(check.query).toBeTypeOf('object');
        expect(check.result).toBeTypeOf('object');
      }
    }
    expect(levels[1]?.kyc).toContainEqual(
      expect.objectContaining({ name: 'bvn', result: { match: true } }),
    );
  });

  it('usr_demo_failedcheck has a failed check', async () => {
    const data = (await json(await kyc('usr_demo_failedcheck'))).data as Json;
    expect(data.level).toBe(1);
    const checks = (data.levels as Json[]).flatMap((l) => l.kyc as Json[]);
    expect(checks.filter((c) => c.status === false)).toHaveLength(1);
  });

  it('the failure users answer what they promise', async () => {
    const started = performance.now();
    const slow = await kyc('usr_kyc_slow');
    expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_MS - 5);
    expect(slow.status).toBe(200);
    expect(((await json(slow)).data as Json).userRef).toBe('usr_kyc_slow');

    const e500 = await kyc('usr_kyc_500');
    expect(e500.status).toBe(500);
    await e500.body?.cancel();

    const envelope = await kyc('usr_kyc_envelope');
    expect(envelope.status).toBe(200);
    expect(await json(envelope)).toEqual({
      error: true,
      message: 'Service temporarily degraded',
      data: null,
    });

    const gone = await kyc('usr_kyc_gone');
    expect(gone.status).toBe(200);
    expect(await json(gone)).toEqual({ error: true, message: 'User does not exist', data: null });

    const html = await kyc('usr_kyc_notjson');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    await html.body?.cancel();

    const bad = await kyc('usr_kyc_badshape');
    expect(await json(bad)).toEqual({ error: false, message: 'ok', data: { levels: 'none' } });

    await expect(kyc('usr_kyc_reset')).rejects.toThrow();
  });

  it('serves the SDK script and its stylesheet (the widget itself: sandbox-sdk and browser tests)', async () => {
    const res = await fetch(sandbox.sdkScriptUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    const script = await res.text();
    expect(script).toContain('InitServiceKyc');
    expect(script).not.toContain(SECRET);
    const css = await fetch(`${sandbox.kycUrl}/sdk/kyc.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toContain('dialog.skyc');
  });
});

describe('KYC store', () => {
  it('recordLevel creates a user and verifies levels, with timestamps from the clock', async () => {
    clock = Date.parse('2025-04-06T07:08:09Z');
    expect((await kyc('usr_new_one')).status).toBe(404);

    sandbox.kyc.recordLevel(
      'usr_new_one',
      'tier_2',
      [{ name: 'bvn', query: { bvn: '22200000009' }, result: { match: true } }],
      {
        name: 'New One',
      },
    );
    let data = (await json(await kyc('usr_new_one'))).data as Json;
    // tier_2 is verified, but tier_1 is not, so the level stays 0.
    expect(data).toMatchObject({
      userRef: 'usr_new_one',
      name: 'New One',
      level: 0,
      status: false,
    });
    expect((data.levels as Json[])[1]).toMatchObject({
      status: true,
      kyc: [
        {
          name: 'bvn',
          status: true,
          query: { bvn: '22200000009' },
          result: { match: true },
          createdAt: '06-04-2025 07:08:09',
          updatedAt: '06-04-2025 07:08:09',
        },
      ],
    });

    sandbox.kyc.recordLevel('usr_new_one', 'tier_1', [
      { name: 'gender', query: { gender: 'male' } },
    ]);
    data = (await json(await kyc('usr_new_one'))).data as Json;
    expect(data).toMatchObject({ level: 2, status: false });

    clock += 60_000;
    const after = sandbox.kyc.recordLevel('usr_new_one', 'tier_3', [
      { name: 'selfie', result: { score: 99 } },
    ]);
    expect(after).toMatchObject({ level: 3, status: true });
    data = (await json(await kyc('usr_new_one'))).data as Json;
    expect(data).toMatchObject({ level: 3, status: true });
    expect((data.levels as Json[])[2]).toMatchObject({
      kyc: [{ name: 'selfie', query: {}, createdAt: '06-04-2025 07:09:09' }],
    });
  });

  it('recordLevel upgrades a demo user, a failed check leaves the level unverified', async () => {
    sandbox.kyc.recordLevel('usr_demo_tier1', 'tier_2', [
      { name: 'bvn', status: false, result: { match: false } },
    ]);
    expect(sandbox.kyc.get('usr_demo_tier1')).toMatchObject({ level: 1, status: false });
    sandbox.kyc.recordLevel('usr_demo_tier1', 'tier_2', [{ name: 'bvn', result: { match: true } }]);
    expect(sandbox.kyc.get('usr_demo_tier1')).toMatchObject({ level: 2, status: false });
  });

  it('rejects an unknown level slug', () => {
    expect(() => sandbox.kyc.recordLevel('usr_demo_new', 'tier_9', [])).toThrow(RangeError);
    expect(() => sandbox.kyc.recordLevel('usr_demo_new', 'gold', [])).toThrow(RangeError);
    expect(sandbox.kyc.has('usr_x_never')).toBe(false);
  });

  it('hands out copies, and two sandboxes share no state', async () => {
    const copy = sandbox.kyc.get('usr_demo_new');
    if (copy === undefined) throw new Error('usr_demo_new is missing');
    copy.level = 99;
    expect(sandbox.kyc.get('usr_demo_new')?.level).toBe(0);

    sandbox.kyc.recordLevel('usr_demo_new', 'tier_1', [
      { name: 'gender', query: { gender: 'female' } },
    ]);
    const other = await startSandbox({
      kycSecretKey: SECRET,
      kycBusinessSlug: SLUG,
      paymentAccessToken: TOKEN,
    });
    try {
      expect(((await json(await kyc('usr_demo_new', { base: other }))).data as Json).level).toBe(0);
      expect(((await json(await kyc('usr_demo_new'))).data as Json).level).toBe(1);
      expect(other.requests).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});

describe('startSandbox and close', () => {
  it('makes random credentials when none are given', async () => {
    const a = await startSandbox();
    const b = await startSandbox();
    try {
      expect(a.credentials.paymentAccessToken).not.toBe(b.credentials.paymentAccessToken);
      expect(a.credentials.kycSecretKey).not.toBe(b.credentials.kycSecretKey);
      expect(a.credentials.kycPublicKey).toMatch(/^pk_sandbox_/);
      expect(a.credentials.kycBusinessSlug).toBe('demo-business');
      expect(a.paymentUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(a.sdkScriptUrl).toBe(`${a.kycUrl}/sdk/kyc.js`);
      const res = await fetch(`${a.paymentUrl}/pg/api/v1/transaction/status/NT-SUCCESS001`, {
        headers: { authorization: `Bearer ${a.credentials.paymentAccessToken}` },
      });
      expect(res.status).toBe(200);
      await res.body?.cancel();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('close() frees both ports, drops keep-alive connections and pending slow answers', async () => {
    const sb = await startSandbox({ paymentAccessToken: TOKEN, slowMs: 60_000 });
    const warm = await fetch(`${sb.paymentUrl}/pg/api/v1/transaction/status/NT-SUCCESS001`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await warm.text(); // leaves a keep-alive connection open in fetch's pool
    const slow = fetch(`${sb.paymentUrl}/pg/api/v1/transaction/status/NT-SLOW001`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await new Promise((resolve) => setTimeout(resolve, 30));

    const started = performance.now();
    await Promise.all([sb.close(), sb.close()]);
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(slow).rejects.toThrow();
    await expect(
      fetch(`${sb.paymentUrl}/pg/api/v1/transaction/status/NT-SUCCESS001`),
    ).rejects.toThrow();

    for (const url of [sb.paymentUrl, sb.kycUrl]) {
      const port = Number(new URL(url).port);
      await new Promise<void>((resolve, reject) => {
        const server = createNetServer();
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
      });
    }
  });

  it('rejects when a port is taken', async () => {
    const blocker = await startSandbox();
    try {
      const port = Number(new URL(blocker.kycUrl).port);
      await expect(startSandbox({ kycPort: port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await blocker.close();
    }
  });
});
