/**
 * Personal data at rest in Redis: with `CACHE_ENCRYPTION_KEY`, no value the cache writes holds a
 * customer's name, e-mail or phone, or a KYC name. Real redis-server, real gateways (in-process,
 * through the same composition as `npm start`), fixture upstreams that count their calls; Redis
 * is read and altered from the test with its own client. Key rotation with
 * `CACHE_ENCRYPTION_OLD_KEYS`; a value that does not open (wrong key, altered, moved to another
 * key, clear while a key is set, sealed while none is) is a miss: one upstream call, the right
 * answer.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import { type Fixture, kycBody, startFixture, transactionBody } from '../helpers/fixture.ts';
import { dataOf, gql, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';

const skip = skipRedisTests('cache-encryption');

const PERSON = {
  fullname: 'Adaeze Okonkwo-Privat',
  email: 'adaeze.privat@example.org',
  phone: '2348031234567',
  joinedAt: 'Mar 1, 2023, 9:00:00 AM',
};
const KYC_NAME = 'Chinwe Ebube-Privat';
const PERSONAL = [PERSON.fullname, PERSON.email, PERSON.phone, KYC_NAME];

const newKey = () => randomBytes(32).toString('base64');
const KEY_A = newKey();
const KEY_B = newKey();

let redis: TestRedis;
let payment: Fixture;
let kyc: Fixture;
const gateways: TestGateway[] = [];

/** Calls the payment upstream received for one reference. */
const callsFor = (txRef: string) =>
  payment.requests.filter((request) => request.path.endsWith(`/${txRef}`)).length;

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  payment = await startFixture((request) => {
    const txRef = request.path.split('/').pop() ?? '';
    return { body: transactionBody({ paymentRef: txRef, customer: PERSON }) };
  });
  kyc = await startFixture((request) => ({
    body: kycBody({ userRef: request.query.get('userRef'), name: KYC_NAME }),
  }));
});

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()));
  await payment?.close();
  await kyc?.close();
  await redis?.stop();
});

/** A gateway on the shared Redis, once its cache answers (so a miss is never Redis's absence). */
async function gatewayWith(env: Record<string, string>): Promise<TestGateway> {
  // What is stored is checked exactly: a Redis command a busy machine delays past the default
  // 250 ms would leave a record unstored (served, but only in memory).
  const gateway = await startGateway(
    { paymentUrl: payment.url, kycUrl: kyc.url },
    { CACHE_URL: redis.url, CACHE_COMMAND_TIMEOUT_MS: '5000', ...env },
  );
  gateways.push(gateway);
  await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 5000);
  return gateway;
}

const TX = (txRef: string) =>
  `{ transaction(txRef: "${txRef}") { txRef paymentRef status customer { fullName email phone } } }`;

/** Reads a transaction through `gateway` and checks that the answer is its own record. */
async function readTx(gateway: TestGateway, txRef: string): Promise<void> {
  const data = dataOf(await gql(gateway, TX(txRef), undefined, await gateway.token()));
  expect(data).toEqual({
    transaction: {
      txRef,
      paymentRef: txRef,
      status: 'SUCCESSFUL',
      customer: { fullName: PERSON.fullname, email: PERSON.email, phone: PERSON.phone },
    },
  });
}

async function readKyc(gateway: TestGateway, userRef: string): Promise<void> {
  const query = `{ kycUser(userRef: "${userRef}") { name level } }`;
  const data = dataOf(await gql(gateway, query, undefined, await gateway.token()));
  expect(data).toEqual({ kycUser: { name: KYC_NAME, level: 1 } });
}

/** Every key in Redis with its value (SCAN, then GET); every key must be a string. */
async function redisValues(): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, keys] = (await redis.command(['SCAN', cursor, 'COUNT', '1000'])) as [
      string,
      string[],
    ];
    for (const key of keys) {
      expect(await redis.command(['TYPE', key]), key).toBe('string');
      values.set(key, String(await redis.command(['GET', key])));
    }
    cursor = next;
  } while (cursor !== '0');
  return values;
}

/**
 * Cache events of transactions the gateway counted (`gateway_cache_events_total`): `error` for a
 * store that failed, `unreadable` for a value that did not open.
 */
async function txCacheEvents(
  gateway: TestGateway,
  outcome: 'error' | 'unreadable',
): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('gateway_cache_events_total{') &&
        l.includes('kind="transaction"') &&
        l.includes(`outcome="${outcome}"`),
    );
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

const txKey = (txRef: string) => `gw:cache:tx:v4:${txRef}`;

describe.skipIf(skip)('records in Redis under CACHE_ENCRYPTION_KEY', () => {
  /** Without a key (the control: what the scan must find when nothing is encrypted). */
  let clear: TestGateway;
  /** Writes with key A. */
  let writer: TestGateway;
  /** Reads with key A (never asked before for the references it reads). */
  let reader: TestGateway;

  it('without a key, the values hold the name, e-mail and phone in clear (the control)', async () => {
    clear = await gatewayWith({});
    await readTx(clear, 'NT-CLEAR1');
    await readKyc(clear, 'usr-privat-1');
    const stored = [...(await redisValues()).values()].join('\n');
    for (const personal of PERSONAL) expect(stored).toContain(personal);
  });

  it('with a key, no value in Redis holds a name, e-mail or phone, and none is JSON', async () => {
    await redis.command(['FLUSHALL']);
    writer = await gatewayWith({ CACHE_ENCRYPTION_KEY: KEY_A });
    await readTx(writer, 'NT-ENC1');
    await readKyc(writer, 'usr-privat-1');
    const values = await redisValues();
    const cached = [...values.keys()].filter((key) => key.startsWith('gw:cache:'));
    expect(cached).toHaveLength(2);
    for (const [key, value] of values) {
      for (const personal of [...PERSONAL, 'NT-ENC1', KEY_A]) {
        expect(value, key).not.toContain(personal);
      }
    }
    for (const key of cached) {
      expect(() => JSON.parse(String(values.get(key)))).toThrow();
    }
    // Redis keeps the sealed entry as long as the clear one (TTL + stale window: 24 h + 7 d).
    const pttl = Number(await redis.command(['PTTL', txKey('NT-ENC1')]));
    expect(pttl).toBeGreaterThan((86_400 + 604_800) * 1000 - 60_000);
  });

  it('a second gateway with the same key is served from Redis: no upstream call', async () => {
    reader = await gatewayWith({ CACHE_ENCRYPTION_KEY: KEY_A });
    const kycCalls = kyc.requests.length;
    await readTx(reader, 'NT-ENC1');
    await readKyc(reader, 'usr-privat-1');
    expect(callsFor('NT-ENC1')).toBe(1);
    expect(kyc.requests.length).toBe(kycCalls);
    expect(await txCacheEvents(reader, 'error')).toBe(0);
    expect(await txCacheEvents(reader, 'unreadable')).toBe(0);
  });

  it('rotation: a new key with the old one in CACHE_ENCRYPTION_OLD_KEYS reads old entries and writes new ones with the new key', async () => {
    const rotated = await gatewayWith({
      CACHE_ENCRYPTION_KEY: KEY_B,
      CACHE_ENCRYPTION_OLD_KEYS: `${newKey()},${KEY_A}`,
    });
    await readTx(rotated, 'NT-ENC1');
    expect(callsFor('NT-ENC1')).toBe(1);

    await readTx(rotated, 'NT-ROT1');
    expect(callsFor('NT-ROT1')).toBe(1);
    // The new entry opens with the new key alone...
    await readTx(await gatewayWith({ CACHE_ENCRYPTION_KEY: KEY_B }), 'NT-ROT1');
    expect(callsFor('NT-ROT1')).toBe(1);
    // ...and not with the old one.
    await readTx(reader, 'NT-ROT1');
    expect(callsFor('NT-ROT1')).toBe(2);
  });

  it('a gateway with another key misses (one upstream call), answers right, and counts an unreadable value', async () => {
    await readTx(writer, 'NT-WRONG1');
    const other = await gatewayWith({ CACHE_ENCRYPTION_KEY: newKey() });
    await readTx(other, 'NT-WRONG1');
    expect(callsFor('NT-WRONG1')).toBe(2);
    expect(await txCacheEvents(other, 'unreadable')).toBeGreaterThanOrEqual(1);
  });

  it('an altered value is a miss, not served', async () => {
    await readTx(writer, 'NT-TAMP1');
    const sealed = String(await redis.command(['GET', txKey('NT-TAMP1')]));
    expect(() => JSON.parse(sealed)).toThrow();
    // One character of the ciphertext changed, length and alphabet kept.
    const at = sealed.length - 30;
    const altered = `${sealed.slice(0, at)}${sealed[at] === 'A' ? 'B' : 'A'}${sealed.slice(at + 1)}`;
    await redis.command(['SET', txKey('NT-TAMP1'), altered, 'KEEPTTL']);
    await readTx(reader, 'NT-TAMP1');
    expect(callsFor('NT-TAMP1')).toBe(2);
  });

  it("a value moved under another payment's key does not open there", async () => {
    await readTx(writer, 'NT-MOVE1');
    await readTx(writer, 'NT-MOVE2');
    const moved = String(await redis.command(['GET', txKey('NT-MOVE1')]));
    await redis.command(['SET', txKey('NT-MOVE2'), moved, 'KEEPTTL']);
    // readTx checks that the answer is NT-MOVE2's own record, not NT-MOVE1's.
    await readTx(reader, 'NT-MOVE2');
    expect(callsFor('NT-MOVE2')).toBe(2);
  });

  it('a clear value while a key is set is a miss', async () => {
    await readTx(clear, 'NT-PLAIN1');
    expect(String(await redis.command(['GET', txKey('NT-PLAIN1')]))).toContain(PERSON.email);
    await readTx(reader, 'NT-PLAIN1');
    expect(callsFor('NT-PLAIN1')).toBe(2);
  });

  it('a sealed value while no key is set is a miss', async () => {
    await readTx(clear, 'NT-ENC1');
    expect(callsFor('NT-ENC1')).toBe(2);
    expect(await txCacheEvents(clear, 'unreadable')).toBeGreaterThanOrEqual(1);
  });
});
