/**
 * `npm run bench:growth`: how the gateway's memory and latency behave as the in-memory cache
 * fills with distinct references, and as `transactions` asks for more references at once.
 *
 * Part 1, cache size: a gateway whose bound is raised above the largest level
 * (CACHE_MAX_ENTRIES = 1.1 M by default) and one with a lower bound (the default 10 000) are
 * each filled, level by level (10 k, 100 k, 1 M distinct refs), through `transactions` with
 * 100 new refs per request. At each level: the largest RSS seen while filling, cache-hit
 * throughput and latency (`transaction` of a random ref that is certainly still cached), and how
 * many entries the cache holds, estimated from 1 000 refs drawn from everything filled so far
 * (the share that costs no upstream call, times the refs filled).
 *
 * Part 2, batch size: `transactions` with 1, 20 and 100 refs per request, all new (misses) and
 * all cached (hits).
 *
 * A level's fill stops early after GROWTH_FILL_LIMIT_S (default 75) or once the gateway's RSS
 * passes GROWTH_RSS_CEILING_MB (default 3000): a cache that does not fit is reported, not waited
 * for. Retained memory is read after a full GC through bench/gc-probe.ts (preloaded; SIGUSR2).
 *
 * Settings: GROWTH_LEVELS (default 10000,100000,1000000), GROWTH_LOW_BOUND (default 10000),
 * GROWTH_DURATION_S (default 3, each timed run), BENCH_CONNECTIONS (default 50).
 * Writes bench/results/growth.json and prints markdown tables. About 6 minutes on 2 cores.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import {
  GATEWAY_PORT,
  gatewayEnv,
  HAS_TASKSET,
  JSON_PORT,
  load,
  pinSelf,
  post,
  probeMemory,
  ROOT,
  resetStub,
  round,
  rssBytes,
  type Started,
  sampleRss,
  settleStub,
  startNode,
  stopAllNow,
} from './lib.ts';
import { type GraphQLBody, transactionBody, transactionsBody } from './queries.ts';

function numbers(env: string | undefined, fallback: number[]): number[] {
  if (env === undefined || env.trim() === '') return fallback;
  const values = env.split(',').map(Number);
  if (values.some((v) => !Number.isInteger(v) || v <= 0)) {
    throw new Error('GROWTH_LEVELS must be whole numbers > 0, comma-separated');
  }
  return values;
}

const LEVELS = numbers(process.env.GROWTH_LEVELS, [10_000, 100_000, 1_000_000]);
const LOW_BOUND = numbers(process.env.GROWTH_LOW_BOUND, [10_000])[0] ?? 10_000;
const RAISED_BOUND = Math.ceil((Math.max(...LEVELS) * 1.1) / 1000) * 1000;
const DURATION_S = Number(process.env.GROWTH_DURATION_S ?? '3');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? '50');
/** A level's fill stops early past this time or this RSS (a cache that does not fit). */
const FILL_LIMIT_S = Number(process.env.GROWTH_FILL_LIMIT_S ?? '75');
const RSS_CEILING_MB = Number(process.env.GROWTH_RSS_CEILING_MB ?? '3000');
const FILL_BATCH = 100;
const FILL_WORKERS = 16;
const SAMPLE = 1000;

/** Only the ref: the fill is about the cache, not the resolvers. */
const FILL_QUERY = `query Fill($txRefs: [ID!]!) { transactions(txRefs: $txRefs) { txRef } }`;

const mb = (bytes: number) => bytes / 1024 / 1024;
const fmt = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

function startGateway(stub: Started, maxEntries: number): Promise<Started> {
  return startNode({
    name: 'gateway',
    script: 'src/main.ts',
    core: 0,
    // Only to read the retained heap after a full GC on demand (bench/gc-probe.ts).
    nodeFlags: ['--expose-gc', '--import', './bench/gc-probe.ts'],
    env: gatewayEnv(stub.port, {
      AUTH_DISABLED: 'true',
      CACHE_MAX_ENTRIES: String(maxEntries),
      // The entry bound is the one under study: the byte bound (4 MiB by default, about 2,800
      // of these records) is lifted out of its way.
      CACHE_MAX_BYTES: '17179869184',
      // The fill sends 50 × 100 references at once; the default bulkhead (256 in flight, 1000
      // queued) would shed most of them, as it should in production.
      UPSTREAM_MAX_QUEUED: '100000',
    }),
    portPattern: GATEWAY_PORT,
  });
}

/**
 * Sends `transactions` of FILL_BATCH refs from `from` up to `to` (exclusive), 16 at a time, and
 * stops early past FILL_LIMIT_S or RSS_CEILING_MB. Returns how far it got.
 */
async function fill(
  url: string,
  pid: number,
  prefix: string,
  from: number,
  to: number,
): Promise<number> {
  let nextStart = from;
  const deadline = performance.now() + FILL_LIMIT_S * 1000;
  let stopped = false;
  const worker = async () => {
    while (nextStart < to && !stopped) {
      if (performance.now() > deadline || mb(rssBytes(pid)) > RSS_CEILING_MB) {
        stopped = true;
        break;
      }
      const start = nextStart;
      const end = Math.min(to, start + FILL_BATCH);
      nextStart = end;
      const refs = Array.from({ length: end - start }, (_, i) => `${prefix}${start + i}`);
      const answer = await post(url, { query: FILL_QUERY, variables: { txRefs: refs } }, {});
      if (answer.errors !== undefined) throw new Error(`fill failed: ${JSON.stringify(answer)}`);
    }
  };
  await Promise.all(Array.from({ length: FILL_WORKERS }, worker));
  return nextStart;
}

const randomInt = (below: number) => Math.floor(Math.random() * below);

interface Level {
  bound: number;
  /** The level asked for. */
  level: number;
  /** Refs actually filled (less than the level when the fill hit its time or RSS limit). */
  refs: number;
  heapAfterGcMB: number;
  rssAfterGcMB: number;
  /** Retained heap per cached entry, over the idle gateway's. */
  bytesPerEntry: number;
  estimatedEntries: number;
  maxRssFillMB: number;
  rssAfterMB: number;
  hitRps: number;
  hitP50Ms: number;
  hitP99Ms: number;
  hitUpstreamCalls: number;
  fillSeconds: number;
}

async function cacheGrowth(stub: Started, bound: number): Promise<Level[]> {
  const gateway = await startGateway(stub, bound);
  const url = `http://127.0.0.1:${gateway.port}/graphql`;
  const prefix = `NT-GENB${bound}x`;
  await post(url, transactionBody('NT-GENIDLE1'), {});
  const idle = await probeMemory(gateway);
  const rows: Level[] = [];
  let filled = 0;
  for (const level of LEVELS) {
    const previous = rows[rows.length - 1];
    if (previous !== undefined && previous.refs < previous.level) break; // it stopped early
    const rss = sampleRss(gateway.pid);
    const t0 = performance.now();
    filled = await fill(url, gateway.pid, prefix, filled, level);
    const fillSeconds = (performance.now() - t0) / 1000;
    const maxRssFill = rss.stop();

    // Hits: refs certainly cached (the most recent quarter of the bound, or of what was filled).
    const recent = Math.max(1, Math.min(filled, Math.floor(bound / 4)));
    const hitBody = (): GraphQLBody =>
      transactionBody(`${prefix}${filled - 1 - randomInt(recent)}`);
    await load({ url, connections: CONNECTIONS, durationS: 1, headers: {}, body: hitBody });
    await settleStub(stub.port);
    await resetStub(stub.port);
    const hits = await load({
      url,
      connections: CONNECTIONS,
      durationS: DURATION_S,
      headers: {},
      body: hitBody,
    });
    const hitCalls = (await settleStub(stub.port)).payment;
    const rssAfter = rssBytes(gateway.pid);

    // Estimated entries: the share of refs drawn from all filled ones that cost no upstream call.
    await resetStub(stub.port);
    const drawn = new Set<number>();
    while (drawn.size < Math.min(SAMPLE, filled)) drawn.add(randomInt(filled));
    const sample = [...drawn];
    for (let i = 0; i < sample.length; i += FILL_BATCH) {
      const refs = sample.slice(i, i + FILL_BATCH).map((n) => `${prefix}${n}`);
      await post(url, { query: FILL_QUERY, variables: { txRefs: refs } }, {});
    }
    const misses = (await settleStub(stub.port)).payment;
    const estimated = Math.round(((sample.length - misses) / sample.length) * filled);
    const memory = await probeMemory(gateway, 120_000);

    const row: Level = {
      bound,
      level,
      refs: filled,
      heapAfterGcMB: mb(memory.heapUsed),
      rssAfterGcMB: mb(memory.rss),
      bytesPerEntry: (memory.heapUsed - idle.heapUsed) / Math.max(1, estimated),
      estimatedEntries: estimated,
      maxRssFillMB: mb(maxRssFill),
      rssAfterMB: mb(rssAfter),
      hitRps: hits.rps,
      hitP50Ms: hits.p50Ms,
      hitP99Ms: hits.p99Ms,
      hitUpstreamCalls: hitCalls,
      fillSeconds,
    };
    rows.push(row);
    console.log(
      `bound ${bound}: ${filled} of ${level} refs filled in ${fmt(fillSeconds, 1)} s, ~${estimated} cached, RSS max ${fmt(row.maxRssFillMB)} MB, heap after GC ${fmt(row.heapAfterGcMB)} MB (${fmt(row.bytesPerEntry)} B/entry), hits ${fmt(hits.rps)} req/s p99 ${fmt(hits.p99Ms, 2)} ms`,
    );
  }
  await gateway.stop();
  return rows;
}

interface BatchRow {
  size: number;
  kind: 'miss' | 'hit';
  rps: number;
  refsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  upstreamCallsPerRequest: number;
  maxRssMB: number;
}

async function batchSizes(stub: Started): Promise<BatchRow[]> {
  const gateway = await startGateway(stub, 10_000);
  const url = `http://127.0.0.1:${gateway.port}/graphql`;
  const rows: BatchRow[] = [];
  let counter = 0;
  for (const size of [1, 20, 100]) {
    const hot = Array.from({ length: size }, (_, i) => `NT-GENHOTB${size}x${i}`);
    await post(url, transactionsBody(hot), {});
    for (const kind of ['miss', 'hit'] as const) {
      const body =
        kind === 'hit'
          ? transactionsBody(hot)
          : () => {
              counter += 1;
              return transactionsBody(
                Array.from({ length: size }, (_, i) => `NT-GENS${size}x${counter}x${i}`),
              );
            };
      await load({ url, connections: CONNECTIONS, durationS: 1, headers: {}, body });
      await settleStub(stub.port);
      await resetStub(stub.port);
      const rss = sampleRss(gateway.pid);
      const result = await load({
        url,
        connections: CONNECTIONS,
        durationS: DURATION_S,
        headers: {},
        body,
      });
      const maxRss = rss.stop();
      const calls = (await settleStub(stub.port)).payment;
      const row: BatchRow = {
        size,
        kind,
        rps: result.rps,
        refsPerSecond: result.rps * size,
        p50Ms: result.p50Ms,
        p99Ms: result.p99Ms,
        upstreamCallsPerRequest: calls / Math.max(1, result.sent),
        maxRssMB: mb(maxRss),
      };
      rows.push(row);
      console.log(
        `transactions × ${size} (${kind}): ${fmt(row.rps)} req/s, ${fmt(row.refsPerSecond)} refs/s, p99 ${fmt(row.p99Ms, 2)} ms`,
      );
    }
  }
  await gateway.stop();
  return rows;
}

async function main(): Promise<void> {
  const pinned = pinSelf(1);
  console.log(
    `growth: levels ${LEVELS.join(', ')}; bounds ${RAISED_BOUND} (raised) and ${LOW_BOUND}; ${DURATION_S} s timed runs, ${CONNECTIONS} connections; ${HAS_TASKSET ? `gateway on core 0, stub${pinned ? ' and load generator' : ''} on core 1` : 'taskset not found: unpinned'}`,
  );
  const stub = await startNode({
    name: 'stub',
    script: 'bench/upstream-stub.ts',
    core: 1,
    env: {},
    portPattern: JSON_PORT,
  });
  const raised = await cacheGrowth(stub, RAISED_BOUND);
  const low = await cacheGrowth(stub, LOW_BOUND);
  const batches = await batchSizes(stub);
  await stub.stop();

  mkdirSync(`${ROOT}bench/results`, { recursive: true });
  const output = {
    finishedAt: new Date().toISOString(),
    settings: {
      levels: LEVELS,
      raisedBound: RAISED_BOUND,
      lowBound: LOW_BOUND,
      durationS: DURATION_S,
      fillLimitS: FILL_LIMIT_S,
      rssCeilingMB: RSS_CEILING_MB,
    },
    cache: [...raised, ...low].map((row) => ({
      ...row,
      maxRssFillMB: round(row.maxRssFillMB, 1),
      rssAfterMB: round(row.rssAfterMB, 1),
      heapAfterGcMB: round(row.heapAfterGcMB, 1),
      rssAfterGcMB: round(row.rssAfterGcMB, 1),
      bytesPerEntry: Math.round(row.bytesPerEntry),
    })),
    batches,
  };
  writeFileSync(`${ROOT}bench/results/growth.json`, `${JSON.stringify(output, null, 2)}\n`);

  const lines = [
    '',
    '#### Cache size (`transaction` cache hits on a random cached ref)',
    '',
    '| CACHE_MAX_ENTRIES | Distinct refs filled | Entries cached (est.) | Max RSS while filling MB | Heap after full GC MB | RSS after full GC MB | Retained bytes/entry | Hit req/s | Hit p50 / p99 ms | Upstream calls during hits | Fill time s |',
    '| -: | -: | -: | -: | -: | -: | -: | -: | -: | -: | -: |',
    ...[...raised, ...low].map(
      (r) =>
        `| ${r.bound} | ${r.refs}${r.refs < r.level ? ` (of ${r.level}: stopped at the ${r.fillSeconds >= FILL_LIMIT_S ? `${FILL_LIMIT_S} s` : `${RSS_CEILING_MB} MB`} limit)` : ''} | ${r.estimatedEntries} | ${fmt(r.maxRssFillMB)} | ${fmt(r.heapAfterGcMB)} | ${fmt(r.rssAfterGcMB)} | ${fmt(r.bytesPerEntry)} | ${fmt(r.hitRps)} | ${fmt(r.hitP50Ms, 2)} / ${fmt(r.hitP99Ms, 2)} | ${r.hitUpstreamCalls} | ${fmt(r.fillSeconds, 1)} |`,
    ),
    '',
    '#### Size of `transactions` (full Transaction selection; miss = all refs new, hit = all cached)',
    '',
    '| Refs per request | Kind | req/s | refs/s | p50 / p99 ms | Upstream calls/req | Max RSS MB |',
    '| -: | --- | -: | -: | -: | -: | -: |',
    ...batches.map(
      (b) =>
        `| ${b.size} | ${b.kind} | ${fmt(b.rps)} | ${fmt(b.refsPerSecond)} | ${fmt(b.p50Ms, 2)} / ${fmt(b.p99Ms, 2)} | ${fmt(b.upstreamCallsPerRequest, 2)} | ${fmt(b.maxRssMB)} |`,
    ),
    '',
    'Written to bench/results/growth.json',
  ];
  console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  stopAllNow();
  process.exit(1);
});
