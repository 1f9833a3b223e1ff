/**
 * Registration of automatic persisted queries is bounded. Two real gateway
 * processes on one real redis-server: one caller registers at most
 * `PERSISTED_REGISTRATIONS_PER_MINUTE` new documents (past it the operation runs and nothing is
 * stored), the documents in Redis stay under `PERSISTED_MAX_BYTES` for the cluster with the
 * least recently used dropped first, they are sealed with the cache key, and — under the
 * operations guide's `maxmemory` + `volatile-lru` — registrations never push records out.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GatewayProcess,
  query,
  spawnReplicas,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { type RedisBench, skipRedisTests, startRedisBench } from '../helpers/redis.ts';

const skip = skipRedisTests('persisted-bounds');
const MAX_BYTES = 400_000;
const KEY = Buffer.alloc(32, 3).toString('base64');

let bench: RedisBench;
let a: GatewayProcess;
let b: GatewayProcess;

beforeAll(async () => {
  if (skip) return;
  bench = await startRedisBench(0);
  const env = {
    CACHE_URL: bench.redis.url,
    CACHE_ENCRYPTION_KEY: KEY,
    PERSISTED_MAX_BYTES: String(MAX_BYTES),
    // Counts are exact here: a Redis command a busy machine delays past the default 250 ms
    // would be served locally instead (redis-outage.test.ts tests that on purpose).
    CACHE_COMMAND_TIMEOUT_MS: '5000',
  };
  [a, b] = await spawnReplicas(bench.upstreams, env);
}, 30_000);

afterAll(async () => {
  await stopAllGateways();
  await bench?.close();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A valid document of about `bytes` (a comment fills it), distinct by `tag`. */
function documentOf(tag: string, bytes = 60_000): string {
  const head = `query Doc_${tag} { gatewayInfo { version } }\n# userRef usr_secret_${tag} `;
  return head + 'x'.repeat(Math.max(0, bytes - head.length));
}

/** Sends hash (and query, when given) as Apollo's persisted-query link does. */
async function apq(gateway: GatewayProcess, token: string, text: string, withQuery: boolean) {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      ...(withQuery && { query: text }),
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256(text) } },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as {
    data?: unknown;
    errors?: { extensions?: { code?: string } }[];
  };
  return { status: response.status, data: body.data, code: body.errors?.[0]?.extensions?.code };
}

async function redisNumber(args: string[]): Promise<number> {
  return Number(await bench.redis.command(args));
}

async function usedMemory(): Promise<number> {
  const info = String(await bench.redis.command(['INFO', 'memory']));
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

describe.skipIf(skip)('persisted-query registration is bounded, two processes on one Redis', () => {
  it('one caller: 30 new documents a minute; past it the operation runs and nothing is stored', async () => {
    const token = await testToken(`registrar-${Date.now()}`);
    const texts = Array.from({ length: 40 }, (_, i) => documentOf(`rate${i}`, 2_000));
    for (const [i, text] of texts.entries()) {
      const answer = await apq(i % 2 ? b : a, token, text, true);
      expect(answer.data).toEqual({ gatewayInfo: { version: expect.any(String) } });
    }
    // The 30th is known to both replicas (through Redis); the 31st to 40th to neither.
    const other = await testToken(`reader-${Date.now()}`);
    expect((await apq(a, other, texts[29] ?? '', false)).data).toBeDefined();
    expect((await apq(b, other, texts[28] ?? '', false)).data).toBeDefined();
    for (const text of texts.slice(30)) {
      for (const gateway of [a, b]) {
        expect((await apq(gateway, other, text, false)).code).toBe('PERSISTED_QUERY_NOT_FOUND');
      }
    }
    // Another caller still registers; registering a known document again costs nothing.
    const fresh = documentOf(`other${Date.now()}`, 2_000);
    await apq(a, other, fresh, true);
    expect((await apq(b, other, fresh, false)).data).toBeDefined();
    await apq(a, token, texts[0] ?? '', true);
  });

  it('documents stay under PERSISTED_MAX_BYTES for the cluster, least recently used first, sealed', async () => {
    // 40 KB each, about 54 KB sealed: seven fit under the bound.
    const texts = Array.from({ length: 5 }, (_, i) => documentOf(`lru${Date.now()}x${i}`, 40_000));
    for (const [i, text] of texts.entries()) {
      await apq(a, await testToken(`lru-${i}-${Date.now()}`), text, true);
    }
    // The first is used on B (which reads it from Redis): it becomes the most recent.
    const reader = await testToken(`lru-reader-${Date.now()}`);
    expect((await apq(b, reader, texts[0] ?? '', false)).data).toBeDefined();
    for (let i = 0; i < 6; i += 1) {
      await apq(
        a,
        await testToken(`lru-more-${i}-${Date.now()}`),
        documentOf(`more${Date.now()}x${i}`, 40_000),
        true,
      );
    }
    const held = await redisNumber(['GET', 'gw:{apq}:bytes']);
    expect(held).toBeLessThanOrEqual(MAX_BYTES);
    const members = (await bench.redis.command(['ZRANGE', 'gw:{apq}:lru', '0', '-1'])) as string[];
    let total = 0;
    for (const hash of members) total += await redisNumber(['STRLEN', `gw:{apq}:doc:${hash}`]);
    expect(total).toBe(held);
    // texts[0] was used after texts[1..4] were registered: they left before it did.
    expect(members).not.toContain(sha256(texts[1] ?? ''));
    expect(members).toContain(sha256(texts[0] ?? ''));
    expect(members.length).toBeLessThanOrEqual(7);
    // Sealed: no document text, no literal from it, in Redis.
    for (const hash of members.slice(-3)) {
      const stored = String(await bench.redis.command(['GET', `gw:{apq}:doc:${hash}`]));
      expect(stored.startsWith('gwe1:')).toBe(true);
      expect(stored).not.toContain('usr_secret');
    }
    // Documents have no TTL (Redis's volatile-* eviction never takes them; the script bounds them).
    expect(await redisNumber(['PTTL', `gw:{apq}:doc:${members.at(-1)}`])).toBe(-1);
  });

  it('a stored document that does not open (another key, altered) is replaced when sent again', async () => {
    const token = await testToken(`rotator-${Date.now()}`);
    const text = documentOf(`rotated${Date.now()}`, 3_000);
    const key = `gw:{apq}:doc:${sha256(text)}`;
    await apq(a, token, text, true);
    // As if sealed with a key no replica holds any more (the byte count kept true).
    const was = await redisNumber(['STRLEN', key]);
    const unreadable = `gwe1:XXXXXXXX:${'A'.repeat(4000)}`;
    await bench.redis.command(['SET', key, unreadable]);
    await bench.redis.command(['INCRBY', 'gw:{apq}:bytes', String(unreadable.length - was)]);
    expect((await apq(b, token, text, false)).code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await apq(b, token, text, true)).data).toBeDefined();
    const reader = await testToken(`rotated-reader-${Date.now()}`);
    expect((await apq(b, reader, text, false)).data).toBeDefined();
    const members = (await bench.redis.command(['ZRANGE', 'gw:{apq}:lru', '0', '-1'])) as string[];
    let total = 0;
    for (const hash of members) total += await redisNumber(['STRLEN', `gw:{apq}:doc:${hash}`]);
    expect(await redisNumber(['GET', 'gw:{apq}:bytes'])).toBe(total);
  });

  it('700 registrations of 60 KB from one caller: Redis grows by a few MB, and no record is evicted', async () => {
    // The operations guide's advice: a memory bound, and Redis evicting keys that have a TTL.
    await bench.redis.command(['CONFIG', 'SET', 'maxmemory-policy', 'volatile-lru']);
    const victim = await testToken(`victim-${Date.now()}`);
    const refs = Array.from({ length: 60 }, (_, i) => `NT-KEEP${Date.now()}X${i}`);
    for (const txRef of refs)
      await query(a, `{ transaction(txRef: "${txRef}") { status } }`, victim);
    const callsBefore = refs.reduce((n, txRef) => n + bench.payment.callsFor(txRef), 0);
    const before = await usedMemory();
    await bench.redis.command(['CONFIG', 'SET', 'maxmemory', String(before + 8 * 1024 * 1024)]);
    try {
      const attacker = await testToken(`flooder-${Date.now()}`);
      const started = Date.now();
      for (let i = 0; i < 700; i += 1) {
        const answer = await apq(i % 2 ? b : a, attacker, documentOf(`flood${started}x${i}`), true);
        expect(answer.status).toBe(200);
      }
      const grown = (await usedMemory()) - before;
      const evicted = Number(
        /evicted_keys:(\d+)/.exec(String(await bench.redis.command(['INFO', 'stats'])))?.[1],
      );
      // Every record is still cached: reading them again costs no upstream call.
      for (const txRef of refs)
        await query(b, `{ transaction(txRef: "${txRef}") { status } }`, victim);
      const callsAfter = refs.reduce((n, txRef) => n + bench.payment.callsFor(txRef), 0);
      let kept = 0;
      for (const txRef of refs) kept += await redisNumber(['EXISTS', `gw:cache:tx:v4:${txRef}`]);
      console.info(
        `[persisted-bounds] 700 registrations of 60 KB from one caller in ${Date.now() - started} ms: Redis used_memory +${(grown / 1024 / 1024).toFixed(2)} MiB, evicted_keys ${evicted}, records kept ${kept}/60, extra upstream calls ${callsAfter - callsBefore}`,
      );
      expect(kept).toBe(60);
      expect(callsAfter - callsBefore).toBe(0);
      expect(evicted).toBe(0);
      expect(grown).toBeLessThan(4 * 1024 * 1024);
    } finally {
      await bench.redis.command(['CONFIG', 'SET', 'maxmemory', '0']);
    }
  }, 120_000);
});
