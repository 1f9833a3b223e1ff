/**
 * `npm run bench:per-record` (`node bench/per-record.ts`): what one upstream record costs the gateway from the answer's text
 * to the stored cache entry — `readAnswer` (bounds, JSON.parse, validation and normalisation)
 * and the in-process store's write (its size, unfrozen as in production) — in µs of CPU and bytes allocated, for the
 * stub's transaction and KYC records. No HTTP, no GraphQL: only the per-record path, so it can
 * compare changes to that path on a busy machine (CPU time of this process, not wall time).
 * Beside each, the same bodies through the mercurius peers' own mapping (bench/peers/mapping.ts:
 * `JSON.parse`, then the plain functions a team writes in a resolver file), which checks less
 * (docs/performance.md says what) and keeps nothing: the cost per record of a hand-written
 * resolver.
 *
 * Bodies: 500 distinct records of each kind, fetched once from a stub started by this script
 * (bench/upstream-stub.ts). Then, per kind, warm-up rounds, timed rounds (the median and the
 * fastest are printed: on a shared machine the fastest is the least disturbed) and ten rounds
 * under V8's sampling heap profiler (every sampled allocation, also
 * those collected since: what a record costs the collector). Settings: `--rounds N` (default 40).
 */
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import type { RecordCache } from '../src/cache/store.ts';
import { createMemoryCache } from '../src/cache/store.ts';
import { readAnswer } from '../src/upstream/clients.ts';
import type { HttpResult } from '../src/upstream/http.ts';
import { moneySourceReviver, upstreamShapes } from '../src/upstream/shapes.ts';
import { JSON_PORT, startNode } from './lib.ts';
import { type Json, kycUserOf, transactionOf } from './peers/mapping.ts';
import { KYC_PATH, PAYMENT_PATH, STUB_CREDENTIALS } from './queries.ts';

const { values: argv } = parseArgs({ options: { rounds: { type: 'string' } } });
const ROUNDS = Number(argv.rounds ?? '40');
const RECORDS = 500;

const stub = await startNode({
  name: 'per-record-stub',
  script: 'bench/upstream-stub.ts',
  env: { STUB_PORT: '0' },
  portPattern: JSON_PORT,
});
async function bodies(path: (i: number) => string, headers: Record<string, string>) {
  const texts: string[] = [];
  for (let i = 0; i < RECORDS; i += 1) {
    const response = await fetch(`http://127.0.0.1:${stub.port}${path(i)}`, { headers });
    if (response.status !== 200) throw new Error(`stub answered ${response.status}`);
    texts.push(await response.text());
  }
  return texts;
}
const transactionBodies = await bodies(
  (i) => `${PAYMENT_PATH}NT-GEN${String(i).padStart(6, '0')}`,
  {
    authorization: `Bearer ${STUB_CREDENTIALS.paymentAccessToken}`,
  },
);
const kycBodies = await bodies(
  (i) =>
    `${KYC_PATH}?${new URLSearchParams({ userRef: `bench-user-${i}`, slug: STUB_CREDENTIALS.kycBusinessSlug })}`,
  { 'x-secret-key': STUB_CREDENTIALS.kycSecretKey },
);
await stub.stop();

const shapes = upstreamShapes('UTC');
const cacheConfig = {
  ttlFinalSeconds: 3600,
  ttlPendingSeconds: 5,
  ttlKycSeconds: 60,
  ttlNotFoundSeconds: 0,
  maxEntries: 100_000,
  maxBytes: 512 * 1024 * 1024,
  // As in production: the freeze is a guard of development and the tests.
  freeze: false,
} as Parameters<typeof createMemoryCache>[0];

const result = (body: string): HttpResult => ({ status: 200, headers: {}, body, attempts: 1 });

type Step = (body: string, i: number, cache: RecordCache) => unknown;

/** A stub transaction's body read as the payment client reads it. */
const readTransaction = (body: string) =>
  readAnswer('payment', result(body), shapes.transactionResponse, moneySourceReviver);

const kinds: Array<{ name: string; texts: string[]; step: Step }> = [
  {
    name: 'transaction',
    texts: transactionBodies,
    step: (body, i, cache) => {
      const answer = readTransaction(body);
      const record =
        answer === null
          ? null
          : Object.assign(answer.data, { txRef: `NT-${i}`, event: answer.event });
      return cache.store('transaction', `tx:${i}`, record, 0, 3600);
    },
  },
  {
    name: 'transaction, read but not stored',
    texts: transactionBodies,
    step: readTransaction,
  },
  {
    name: "transaction, the peers' mapping",
    texts: transactionBodies,
    step: (body, i) => transactionOf(JSON.parse(body) as Json, `NT-${i}`),
  },
  {
    name: 'KYC user (3 levels × 3 checks)',
    texts: kycBodies,
    step: (body, i, cache) => {
      const answer = readAnswer('kyc', result(body), shapes.kycResponse);
      return cache.store('kyc', `kyc:${i}`, answer?.data, 0, 60);
    },
  },
  {
    name: "KYC user, the peers' mapping",
    texts: kycBodies,
    step: (body, i) => kycUserOf(JSON.parse(body) as Json, `bench-user-${i}`),
  },
];

async function round(kind: (typeof kinds)[number]): Promise<number> {
  // A fresh store per round (made before the clock starts): every write is a first write.
  const cache = createMemoryCache(cacheConfig);
  const before = process.cpuUsage();
  for (let i = 0; i < kind.texts.length; i += 1) await kind.step(kind.texts[i] as string, i, cache);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / kind.texts.length;
}

interface SamplingNode {
  selfSize: number;
  children: SamplingNode[];
}
const total = (node: SamplingNode): number =>
  node.selfSize + node.children.reduce((sum, child) => sum + total(child), 0);

const session = new Session();
session.connect();
console.log(
  `| record | µs CPU per record, median of ${ROUNDS} rounds × ${RECORDS} | fastest round | bytes allocated per record |`,
);
console.log('|---|--:|--:|--:|');
for (const kind of kinds) {
  for (let i = 0; i < 10; i += 1) await round(kind);
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) times.push(await round(kind));
  times.sort((a, b) => a - b);
  const cache = createMemoryCache(cacheConfig);
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 128,
    includeObjectsCollectedByMinorGC: true,
    includeObjectsCollectedByMajorGC: true,
  });
  const REPEAT = 10;
  for (let r = 0; r < REPEAT; r += 1) {
    for (let i = 0; i < kind.texts.length; i += 1)
      await kind.step(kind.texts[i] as string, i, cache);
  }
  const { profile } = await session.post('HeapProfiler.stopSampling');
  const bytes = total(profile.head as SamplingNode) / (REPEAT * kind.texts.length);
  const median = times[Math.floor(times.length / 2)] ?? 0;
  console.log(
    `| ${kind.name} | ${median.toFixed(1)} | ${(times[0] ?? 0).toFixed(1)} | ${Math.round(bytes).toLocaleString('en')} |`,
  );
}
session.disconnect();
