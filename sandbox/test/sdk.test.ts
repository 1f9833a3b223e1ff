/**
 * The sandbox's endpoints for the KYC widget (`/sdk/v1/session`, `/sdk/v1/verify`) over real
 * HTTP: the public key and slug authenticate, CORS lets a page of another origin call, an
 * accepted verification lands in the KYC store (and so in `GET /api/v1/user/kyc`), and the
 * documented values are rejected. The widget's behaviour in a page is in the browser tests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../index.ts';

const PUBLIC_KEY = 'pk_test_sdk';
const SECRET = 'sk_test_sdk_secret';
const SLUG = 'sdk-business';
const ORIGIN = 'http://127.0.0.1:9';

let sandbox: Sandbox;
let clock = Date.parse('2025-05-06T07:08:09Z');

beforeAll(async () => {
  sandbox = await startSandbox({
    kycPublicKey: PUBLIC_KEY,
    kycSecretKey: SECRET,
    kycBusinessSlug: SLUG,
    now: () => clock,
  });
});
afterAll(async () => {
  await sandbox.close();
});

type Answer = { error: boolean; code?: string; message: string; data: Record<string, unknown> };

async function call(
  path: 'session' | 'verify',
  body: unknown,
  key: string | null = PUBLIC_KEY,
): Promise<{ status: number; headers: Headers; body: Answer }> {
  const response = await fetch(`${sandbox.kycUrl}/sdk/v1/${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      origin: ORIGIN,
      ...(key !== null && { 'x-public-key': key }),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Answer,
  };
}

const start = { slug: SLUG, userRef: 'usr_sdk_1', name: 'Sade Adu', levelSlug: 'tier_1' };

describe('session', () => {
  it('hands the widget the steps of the level, with CORS for any origin', async () => {
    const { status, headers, body } = await call('session', start);
    expect(status).toBe(200);
    expect(headers.get('access-control-allow-origin')).toBe('*');
    expect(body).toEqual({
      error: false,
      message: 'Session started',
      data: {
        business: SLUG,
        level: {
          level: 1,
          slug: 'tier_1',
          name: 'Basic',
          steps: [
            expect.objectContaining({ check: 'gender', kind: 'choice' }),
            expect.objectContaining({ check: 'name', kind: 'text' }),
          ],
        },
      },
    });
  });

  it('answers the browser preflight', async () => {
    const response = await fetch(`${sandbox.kycUrl}/sdk/v1/verify`, {
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-public-key',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    expect(response.headers.get('access-control-allow-headers')).toBe('content-type, x-public-key');
  });

  it('refuses a wrong or missing public key, the secret key among them, before anything else', async () => {
    for (const key of [null, 'pk_wrong', SECRET]) {
      const { status, body } = await call('session', { ...start, slug: 'nope' }, key);
      expect(status).toBe(401);
      expect(body).toEqual({
        error: true,
        code: 'INVALID_PUBLIC_KEY',
        message: 'The public key is not valid.',
        data: null,
      });
    }
  });

  it('refuses a wrong slug, an unknown level and missing user fields', async () => {
    expect((await call('session', { ...start, slug: 'other' })).body.code).toBe('INVALID_SLUG');
    expect((await call('session', { ...start, levelSlug: 'tier_9' })).body.code).toBe(
      'INVALID_LEVEL',
    );
    const noUser = await call('session', { ...start, userRef: '' });
    expect(noUser.status).toBe(400);
    expect(noUser.body.code).toBe('INVALID_INPUT');
    expect((await call('session', { ...start, name: 'x'.repeat(201) })).body.code).toBe(
      'INVALID_INPUT',
    );
    expect((await call('session', 'not json')).body.code).toBe('INVALID_INPUT');
  });

  it('answers 405 to a GET and 404 to another path', async () => {
    const get = await fetch(`${sandbox.kycUrl}/sdk/v1/session`);
    expect(get.status).toBe(405);
    await get.body?.cancel();
    const other = await fetch(`${sandbox.kycUrl}/sdk/v1/other`, { method: 'POST' });
    expect(other.status).toBe(404);
    await other.body?.cancel();
  });
});

describe('verify', () => {
  it('records accepted checks, which the KYC details endpoint then returns', async () => {
    clock = Date.parse('2025-05-06T07:08:09Z');
    const { status, body } = await call('verify', {
      ...start,
      answers: { gender: 'female', name: '  Sade Adu ' },
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      error: false,
      message: 'Verification accepted',
      data: {
        verificationId: expect.stringMatching(/^kyc_ver_[0-9a-f]{16}$/),
        userRef: 'usr_sdk_1',
        levelSlug: 'tier_1',
        level: 1,
        levelName: 'Basic',
        checks: [
          { name: 'gender', passed: true },
          { name: 'name', passed: true },
        ],
        verifiedAt: '2025-05-06T07:08:09.000Z',
      },
    });

    const details = await fetch(
      `${sandbox.kycUrl}/api/v1/user/kyc?userRef=usr_sdk_1&slug=${SLUG}`,
      { headers: { 'x-secret-key': SECRET } },
    );
    const user = ((await details.json()) as { data: Record<string, unknown> }).data;
    expect(user).toMatchObject({
      userRef: 'usr_sdk_1',
      name: 'Sade Adu',
      level: 1,
      status: false,
      levels: [
        {
          levelSlug: 'tier_1',
          status: true,
          kyc: [
            {
              name: 'gender',
              status: true,
              query: { gender: 'female' },
              updatedAt: '06-05-2025 07:08:09',
            },
            { name: 'name', status: true, query: { name: 'Sade Adu' } },
          ],
        },
        { levelSlug: 'tier_2', status: false },
        { levelSlug: 'tier_3', status: false },
      ],
    });
  });

  it('rejects eleven zeros or the word "reject", records the failure and says which check failed', async () => {
    const tier2 = { ...start, userRef: 'usr_sdk_2', levelSlug: 'tier_2' };
    const zeros = await call('verify', {
      ...tier2,
      answers: { bvn: '00000000000', dob: '1990-01-31' },
    });
    expect(zeros.status).toBe(422);
    expect(zeros.body).toEqual({
      error: true,
      code: 'CHECK_REJECTED',
      message: 'Verification rejected: bvn.',
      data: {
        checks: [
          {
            name: 'bvn',
            passed: false,
            reason: 'The bank verification number could not be verified.',
          },
          { name: 'dob', passed: true },
        ],
      },
    });
    expect(sandbox.kyc.get('usr_sdk_2')?.levels[1]).toMatchObject({
      status: false,
      kyc: [
        { name: 'bvn', status: false },
        { name: 'dob', status: true },
      ],
    });

    const word = await call('verify', {
      ...start,
      userRef: 'usr_sdk_3',
      answers: { gender: 'male', name: 'REJECT' },
    });
    expect(word.body.code).toBe('CHECK_REJECTED');
    const document = await call('verify', {
      ...start,
      userRef: 'usr_sdk_3',
      levelSlug: 'tier_3',
      answers: { address: '1 Marina, Lagos', document: '00000000000' },
    });
    expect(document.body.message).toBe('Verification rejected: document.');

    // A new attempt that passes verifies the level.
    const again = await call('verify', {
      ...tier2,
      answers: { bvn: '22212345678', dob: '1990-01-31' },
    });
    expect(again.status).toBe(200);
    expect(sandbox.kyc.get('usr_sdk_2')?.levels[1]?.status).toBe(true);
  });

  it('refuses malformed answers without recording anything', async () => {
    const cases: [Record<string, string> | null, string][] = [
      [null, 'answers must be an object keyed by check name.'],
      [{ gender: 'female' }, 'Name: an answer is required.'],
      [{ gender: 'other', name: 'Sade' }, 'Gender: choose one of the options.'],
      [{ gender: 'female', name: 'S' }, 'Name: enter 2 to 100 characters.'],
    ];
    for (const [answers, message] of cases) {
      const { status, body } = await call('verify', { ...start, userRef: 'usr_sdk_4', answers });
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: 'INVALID_INPUT', message });
    }
    const tier2 = { ...start, userRef: 'usr_sdk_4', levelSlug: 'tier_2' };
    for (const [bvn, dob] of [
      ['1234', '1990-01-31'],
      ['22212345678', '1990-02-30'],
      ['22212345678', '2999-01-01'],
    ]) {
      const { body } = await call('verify', { ...tier2, answers: { bvn, dob } });
      expect(body.code).toBe('INVALID_INPUT');
    }
    expect(sandbox.kyc.has('usr_sdk_4')).toBe(false);
  });

  it('is recorded without the secret key: the widget never needs it', () => {
    const widgetCalls = sandbox.requests.filter((r) => r.path.startsWith('/sdk/v1/'));
    expect(widgetCalls.length).toBeGreaterThan(5);
    for (const r of widgetCalls) expect(r.headers['x-secret-key']).toBeUndefined();
  });
});
