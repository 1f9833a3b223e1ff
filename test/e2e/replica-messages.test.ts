/**
 * Messages between replicas (live status on `<prefix>:live:{<txRef>}:events`), with two real
 * gateway processes per cluster on one real redis-server: with `CACHE_ENCRYPTION_KEY` they are
 * sealed (AES-256-GCM, the channel as associated data), without it they carry no personal data.
 * Either way a party that can PUBLISH on Redis cannot make a subscriber see a payment: its
 * messages are dropped and counted (`gateway_live_messages_rejected_total`).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '@redis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import { transactionBody } from '../helpers/fixture.ts';
import {
  follow,
  type GatewayProcess,
  spawnReplicas,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { type RedisBench, skipRedisTests, startRedisBench } from '../helpers/redis.ts';

const skip = skipRedisTests('replica-messages');
const PERSONAL = ['Test Person', 'test@example.com', '2348000000000', '539983', '8381'];

let bench: RedisBench;
let sealed: [GatewayProcess, GatewayProcess];
let clear: [GatewayProcess, GatewayProcess];
let token: string;
let listener: ReturnType<typeof createClient>;
/** Every message seen on Redis, by channel. */
const heard = new Map<string, string[]>();

beforeAll(async () => {
  if (skip) return;
  bench = await startRedisBench(Number.POSITIVE_INFINITY);
  const common = { CACHE_URL: bench.redis.url, LIVE_POLL_MS: '200', LIVE_HEARTBEAT_MS: '250' };
  const keyed = {
    ...common,
    CACHE_KEY_PREFIX: 'sealed',
    CACHE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  const open = { ...common, CACHE_KEY_PREFIX: 'clear' };
  [sealed, clear] = await Promise.all([
    spawnReplicas(bench.upstreams, keyed),
    spawnReplicas(bench.upstreams, open),
  ]);
  token = await testToken();
  listener = createClient({ url: bench.redis.url });
  listener.on('error', () => {});
  await listener.connect();
  await listener.pSubscribe('*:live:{*}:events', (message, channel) => {
    heard.set(channel, [...(heard.get(channel) ?? []), message]);
  });
}, 40_000);

afterAll(async () => {
  listener?.destroy();
  await stopAllGateways();
  await bench?.close();
});

/** A record as the old message format carried it: settled, for a large amount. */
function forgedRecord(txRef: string) {
  const body = transactionBody({ paymentRef: txRef, amount: 999999 });
  return { ...body.data, txRef, status: 'SUCCESSFUL', amount: '999999' };
}

async function rejected(gateways: GatewayProcess[]): Promise<number> {
  let total = 0;
  for (const gateway of gateways)
    total += await gateway.metric('gateway_live_messages_rejected_total');
  return total;
}

async function publish(channel: string, message: string): Promise<void> {
  await bench.redis.command(['PUBLISH', channel, message]);
}

/** Forged messages of every form a party without the key could send. */
function forgeries(txRef: string, owner: string): string[] {
  const record = forgedRecord(txRef);
  return [
    // The format of the messages before this change, which were accepted unchecked.
    JSON.stringify({ t: 'event', owner, event: { type: 'record', record } }),
    JSON.stringify({ t: 'record', owner, record }),
    JSON.stringify({ t: 'error', owner, code: 'NOT_A_CODE', message: 'x' }),
    'gwe1:AAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    'not json',
  ];
}

describe.skipIf(skip)('messages between replicas', () => {
  it('with CACHE_ENCRYPTION_KEY: sealed, bound to their channel; forged ones dropped and counted', async () => {
    const txRef = `NT-SEAL${Date.now()}`;
    const other = `NT-SEALB${Date.now()}`;
    const channel = `sealed:live:{${txRef}}:events`;
    const followers = [follow(sealed[0], txRef, token), follow(sealed[1], txRef, token)];
    const bystander = follow(sealed[0], other, token);
    await Promise.all([...followers, bystander].map((f) => f.first));
    await until(() => (heard.get(channel)?.length ?? 0) >= 2, 3000);
    await until(() => (heard.get(`sealed:live:{${other}}:events`)?.length ?? 0) >= 1, 3000);

    const before = await rejected(sealed);
    const forged = forgeries(txRef, 'forger');
    // A genuine sealed message of another channel, replayed on this one.
    forged.push(heard.get(`sealed:live:{${other}}:events`)?.[0] ?? '');
    for (const message of forged) await publish(channel, message);
    // Each of the two replicas drops each message.
    await until(async () => (await rejected(sealed)) - before >= 2 * forged.length, 3000);
    await sleep(300);
    for (const f of followers) {
      expect(f.statuses).toEqual(['PENDING']);
      expect(f.errors).toEqual([]);
      expect(f.completed).toBe(false);
    }
    console.info(
      `[replica-messages] sealed: ${forged.length} forged messages × 2 replicas → ${(await rejected(sealed)) - before} rejected; subscribers saw ${followers.map((f) => f.statuses.join('>')).join(', ')}`,
    );

    // The genuine messages still pass: the settled status reaches both replicas' subscribers.
    bench.payment.settleAt.set(txRef, Date.now());
    await Promise.race([Promise.all(followers.map((f) => f.done)), sleep(8000)]);
    for (const f of followers) {
      expect(f.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
      expect(f.completed).toBe(true);
    }
    bystander.stop();
    const genuine = (heard.get(channel) ?? []).filter((m) => !forged.includes(m));
    expect(genuine.length).toBeGreaterThan(2);
    for (const message of genuine) {
      expect(message.startsWith('gwe1:')).toBe(true);
      for (const value of [...PERSONAL, 'SUCCESSFUL', 'PENDING'])
        expect(message).not.toContain(value);
    }
  });

  it('without a key: no personal data on the channel, and a forged record is never shown', async () => {
    const txRef = `NT-CLEAR${Date.now()}`;
    const channel = `clear:live:{${txRef}}:events`;
    const followers = [follow(clear[0], txRef, token), follow(clear[1], txRef, token)];
    await Promise.all(followers.map((f) => f.first));
    await until(() => (heard.get(channel)?.length ?? 0) >= 2, 3000);

    const before = await rejected(clear);
    const forged = forgeries(txRef, 'forger');
    for (const message of forged) await publish(channel, message);
    await until(async () => (await rejected(clear)) - before >= 2 * forged.length, 3000);
    // A forged "changed" is accepted, and only makes a replica read the true record.
    await publish(channel, JSON.stringify({ t: 'changed', owner: 'forger', at: Date.now() }));
    await sleep(300);
    for (const f of followers) {
      expect(f.statuses).toEqual(['PENDING']);
      expect(f.completed).toBe(false);
    }

    bench.payment.settleAt.set(txRef, Date.now());
    await Promise.race([Promise.all(followers.map((f) => f.done)), sleep(8000)]);
    for (const f of followers) {
      expect(f.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
      expect(f.completed).toBe(true);
    }
    const genuine = (heard.get(channel) ?? []).filter(
      (m) => !forged.includes(m) && !m.includes('forger'),
    );
    expect(genuine.some((m) => m.includes('"changed"'))).toBe(true);
    for (const message of genuine) {
      for (const value of [...PERSONAL, 'amount', 'customer']) expect(message).not.toContain(value);
    }
  });
});
