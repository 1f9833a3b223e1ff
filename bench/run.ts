/**
 * `npm run bench`: the gateway beside the servers its users would pick instead, set up as those
 * users deploy them for production (bench/peers/: "mercurius-prod" = Fastify 5 + mercurius 16
 * with JIT, loaders, mercurius-cache, pino at info to a file through an asynchronous
 * destination, fastify-metrics and @fastify/jwt with its verifier cache; Apollo Server 5 with a
 * log line, a histogram and a cached JWT check), and beside the bare `node:http` limit
 * (bench/reference.ts), over the same fast upstream stub (bench/upstream-stub.ts), scenario by
 * scenario, with authentication on (the headline) and off, at 16 and 50 connections. Writes
 * bench/results/latest.json and prints markdown tables; docs/performance.md says how to read
 * them. About 19 minutes with the defaults on a 2-core machine.
 *
 * Layout on a 2-core machine: every system under test on core 0 (one at a time under load, once
 * the others are quiet), the stub and this load generator on core 1 (taskset; unpinned
 * when taskset is missing, which the output says). Every system runs on the project's Node 24
 * (the `node` devDependency) with its stdout and stderr written to a file of its own under
 * bench/results/logs/ (never a pipe read on the load generator's core). The gateway runs with
 * NODE_ENV=production (auth off: development, since production refuses AUTH_DISABLED), logs at
 * info, metrics on (always), rate limits off, tracing off, GraphiQL and introspection off.
 *
 * Settings (argv wins over environment):
 *   --duration S       BENCH_DURATION_S      measured seconds per cell (default 6)
 *   --warmup S         BENCH_WARMUP_S        warm-up seconds before each cell (default 2)
 *   --start-warmup S   BENCH_START_WARMUP_S  seconds of each scenario in turn on every process
 *                      once it has started, before its first cell (default 4; the tables only)
 *   --rounds N         BENCH_ROUNDS          the tables: each cell's measured seconds split into N
 *                      rounds, every system measured once per round in rotating order (default 5)
 *   --connections N,M  BENCH_CONNECTIONS     connection counts (default 16,50)
 *   --latency MS       BENCH_UPSTREAM_LATENCY_MS  fixed stub latency (default 0)
 *   --scenarios S1,S2,S3,S4   --auth on,off
 *   --systems gateway,reference,mercurius-prod,apollo   (also `mercurius`: the bare peer of
 *                      earlier rounds, jose without cache, no log, no metrics)
 *   --profile          instead of the tables: profile the gateway (node --cpu-prof) in the
 *                      chosen scenarios (default S1,S3,S4), auth on, and print the top functions.
 *   --allocations      instead of the tables: bytes allocated per request by the gateway and each
 *                      peer (V8's sampling heap profiler, bench/alloc-probe.ts) over a fixed number
 *                      of requests per scenario, auth on by default. Unlike req/s, this does not
 *                      move with the machine's load, so it can compare changes on a noisy machine.
 *   --features         instead of the tables: the gateway's bare pipeline, then each production
 *                      feature added alone, both loaded at once on their shared core in short
 *                      rounds, beside a second bare process (the noise floor; bench/features.ts);
 *                      each share from req/s and from µs of CPU per request.
 *                      BENCH_FEATURE_PAIRS rounds (default 8);
 *                      BENCH_FEATURE_NAMES (words, comma-separated) keeps only the features whose
 *                      name holds one. With --marginal: the production pipeline against the same
 *                      pipeline with one feature off (what each adds as production runs it).
 *                      With --rate N: each process is offered N req/s instead of being loaded as
 *                      fast as it answers; shares from µs of CPU per request at that same load.
 *   --businesses N,M   instead of the tables: what more businesses cost (bench/businesses.ts).
 *                      The gateway alone, auth on, serving one business (no file) and N, M
 *                      businesses from a BUSINESSES_FILE against the stub, the requests spread
 *                      over the businesses in turn (each token names one in `biz`), in rotating
 *                      order for BENCH_BUSINESS_ROUNDS rounds (default 3); per scenario (default
 *                      S1) the median req/s, p99 and µs of CPU per request of each, and their
 *                      ratio to one business. With --allocations: bytes allocated per request of
 *                      each instead (bench/alloc-probe.ts), which does not move with the load.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { businessesEnv, headersInTurn } from './businesses.ts';
import {
  BARE_ENV,
  cpuShare,
  cpuSpread,
  FEATURES,
  type Feature,
  FULL_ENV,
  NOISE_FLOOR,
  NOT_SWITCHABLE,
  type PairResult,
  share,
} from './features.ts';
import {
  benchToken,
  CPU_TICK_S,
  cpuSeconds,
  cpuSecondsOfAll,
  GATEWAY_PORT,
  gatewayEnv,
  HAS_TASKSET,
  JSON_PORT,
  LOG_DIR,
  type LoadOptions,
  type LoadResult,
  load,
  NODE_VERSION,
  peerEnv,
  pinSelf,
  post,
  ROOT,
  resetStub,
  round,
  type Started,
  sampleRss,
  settleStub,
  setupPeers,
  sleep,
  startNode,
  stopAllNow,
  untilQuiet,
} from './lib.ts';
import {
  renderAllocations,
  renderFeatureShares,
  renderSummary,
  summarise,
  summariseAllocations,
} from './profile-summary.ts';
import {
  BENCH_JWT_SECRET,
  type GraphQLBody,
  kycUserBody,
  newRecordsBody,
  transactionBody,
  transactionsBody,
} from './queries.ts';

const { values: argv } = parseArgs({
  options: {
    duration: { type: 'string' },
    warmup: { type: 'string' },
    'start-warmup': { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string' },
    latency: { type: 'string' },
    scenarios: { type: 'string' },
    auth: { type: 'string' },
    profile: { type: 'boolean', default: false },
    allocations: { type: 'boolean', default: false },
    features: { type: 'boolean', default: false },
    marginal: { type: 'boolean', default: false },
    rate: { type: 'string' },
    businesses: { type: 'string' },
    systems: { type: 'string' },
  },
});

function setting(flag: string | undefined, env: string, fallback: number): number {
  const raw = flag ?? process.env[env];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${env} must be a number ≥ 0`);
  return value;
}

function list<T extends string>(raw: string, allowed: readonly T[], name: string): T[] {
  const values = raw.split(',').map((v) => v.trim());
  for (const value of values) {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new Error(`${name}: ${value} is not one of ${allowed.join(', ')}`);
    }
  }
  return values as T[];
}

const FEATURE_MODE = argv.features === true;
/** `--features --marginal`: each feature taken out of the production pipeline (bench/features.ts). */
const MARGINAL = argv.marginal === true;
if (MARGINAL && !FEATURE_MODE) throw new Error('--marginal goes with --features');
/**
 * `--features --rate N`: each process of a round is sent N requests per second, whatever its
 * pace, instead of as many as it answers; the shares then come from µs of CPU per request at the
 * same load. Below both processes' capacity, neither waits for the load generator, which can
 * keep two processes busy at the rates of S1 and S4 no more than it can one at full speed.
 */
const RATE = argv.rate === undefined ? undefined : Number(argv.rate);
if (RATE !== undefined && (!FEATURE_MODE || !(RATE >= 1))) {
  throw new Error('--rate: a number of requests per second ≥ 1, with --features');
}
/** The business counts of the `--businesses` mode, beside one; undefined: not that mode. */
const BUSINESS_COUNTS = argv.businesses?.split(',').map((raw) => {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 2 || value > 1000) {
    throw new Error('--businesses: whole numbers from 2 to 1000 (one business is always measured)');
  }
  return value;
});
/** Rounds of the `--businesses` mode (each measures every count once, in rotating order). */
const BUSINESS_ROUNDS = setting(undefined, 'BENCH_BUSINESS_ROUNDS', 3);
// The features mode measures short rounds of both processes at once (see `features`).
const DURATION_S = setting(argv.duration, 'BENCH_DURATION_S', FEATURE_MODE ? 3 : 6);
// The features mode starts two new processes for each feature: a fresh process is slower until
// its code is compiled and its heap has grown (4 s of warm-up left a second bare process 5 %
// behind the first), hence 8 s there.
const WARMUP_S = setting(argv.warmup, 'BENCH_WARMUP_S', FEATURE_MODE ? 8 : 2);
/**
 * The tables' warm-up of each process once it has started: every chosen scenario in turn for
 * this many seconds, at the largest connection count, before its first measured cell. A process
 * keeps getting cheaper per request for some seconds after its start (its code is compiled as it
 * runs, its heap and record cache grow): with only each cell's own warm-up, the first cells
 * measured a process still on its way there, mercurius-prod more than the gateway.
 */
const START_WARMUP_S = setting(argv['start-warmup'], 'BENCH_START_WARMUP_S', 4);
/**
 * The tables' rounds per cell: after each system's warm-up on the cell's load, every system is
 * measured once per round (DURATION_S ÷ ROUNDS seconds, after ROUND_WARMUP_S of load), the order
 * rotating, and a cell's figures are the medians of its rounds. This machine's speed drifts by
 * a fifth and more over minutes: one measurement of each system in turn put whichever ran in a
 * faster minute ahead, and the same code's ratio to a peer moved by as much between two runs.
 */
const ROUNDS = Math.max(1, Math.round(setting(argv.rounds, 'BENCH_ROUNDS', 5)));
/** Load before each round's measurement: the system sat idle while the others ran. */
const ROUND_WARMUP_S = 0.5;
/** Rounds (both processes loaded at once) per feature and scenario in the features mode. */
const PAIRS = setting(undefined, 'BENCH_FEATURE_PAIRS', 8);
/** The features measured: those whose name holds one of these words (all when unset). */
const FEATURE_WORDS = (process.env.BENCH_FEATURE_NAMES ?? '')
  .split(',')
  .map((word) => word.trim())
  .filter(Boolean);
const CHOSEN_FEATURES = FEATURES.filter(
  (feature) =>
    FEATURE_WORDS.length === 0 || FEATURE_WORDS.some((word) => feature.name.includes(word)),
);
const CONNECTION_COUNTS = (argv.connections ?? process.env.BENCH_CONNECTIONS ?? '16,50')
  .split(',')
  .map((raw) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1)
      throw new Error('connections must be whole numbers ≥ 1');
    return value;
  });
/** The connection count of the profiler and allocation modes (the first one asked). */
const CONNECTIONS = CONNECTION_COUNTS[0] ?? 16;
const LATENCY_MS = setting(argv.latency, 'BENCH_UPSTREAM_LATENCY_MS', 0);
/**
 * Node flags added to every system under test (gateway, peers, reference), e.g.
 * `BENCH_NODE_FLAGS=--no-allocation-site-pretenuring` to give the peers what the gateway sets
 * for itself, or a heap size to compare memory at the same settings.
 */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const PROFILE = argv.profile === true;
const ALLOCATIONS = argv.allocations === true;
/** The like-for-like tables: none of the other modes. */
const TABLES_MODE = !PROFILE && !ALLOCATIONS && !FEATURE_MODE && !BUSINESS_COUNTS;
const SCENARIO_IDS: string[] = list(
  argv.scenarios ?? (BUSINESS_COUNTS ? 'S1' : PROFILE || FEATURE_MODE ? 'S1,S3,S4' : 'S1,S2,S3,S4'),
  ['S1', 'S2', 'S3', 'S4'] as const,
  '--scenarios',
);
const AUTH_MODES = list(argv.auth ?? 'on,off', ['on', 'off'] as const, '--auth');
type Auth = (typeof AUTH_MODES)[number];
const ALL_PEERS = ['mercurius-prod', 'apollo', 'mercurius'] as const;
const SYSTEMS = list(
  argv.systems ?? 'gateway,reference,mercurius-prod,apollo',
  ['gateway', 'reference', ...ALL_PEERS] as const,
  '--systems',
);
/** The peers a user would pick instead (bench/peers/), measured beside the gateway. */
const PEERS = ALL_PEERS.filter((peer) => SYSTEMS.includes(peer));
/** The peer of the headline ratio. */
const MAIN_PEER = 'mercurius-prod';

interface Scenario {
  id: string;
  title: string;
  /** Upstream calls one request should make (0 for cache hits). */
  expectedCalls: number;
  /** The body of every request; a function makes a new one per request. */
  body: (tag: string) => GraphQLBody | (() => GraphQLBody);
  /** The body of the correctness check before timing. */
  check: (tag: string) => GraphQLBody;
  /** Path on the reference (the precomputed-body variant for cache hits). */
  referencePath: string;
}

let sequence = 0;
const next = () => (sequence += 1);
/** A tag as a reference may hold it (letters and digits: `NT-` refs allow nothing else). */
const clean = (tag: string) => tag.replace(/[^A-Za-z0-9]/g, '');

const SCENARIOS: Scenario[] = [
  {
    id: 'S1',
    title: '`transaction`, a new txRef per request (cache miss, 1 upstream call)',
    expectedCalls: 1,
    body: (raw) => () => newRecordsBody('S1', clean(raw), next()),
    check: (raw) => transactionBody(`NT-GENCHECK${clean(raw)}`),
    referencePath: '/graphql',
  },
  {
    id: 'S2',
    title: '`transaction`, the same final txRef every time (cache hit)',
    expectedCalls: 0,
    body: (raw) => transactionBody(`NT-GENHOT${clean(raw)}`),
    check: (raw) => transactionBody(`NT-GENHOT${clean(raw)}`),
    referencePath: '/graphql/precomputed',
  },
  {
    id: 'S3',
    title: '`transactions` with 20 new txRefs per request (20 upstream calls)',
    expectedCalls: 20,
    body: (raw) => () => newRecordsBody('S3', clean(raw), next()),
    check: (raw) =>
      transactionsBody(Array.from({ length: 20 }, (_, i) => `NT-GENCHECK${clean(raw)}x${i}`)),
    referencePath: '/graphql',
  },
  {
    id: 'S4',
    title: '`kycUser`, 3 levels × 3 checks, a new user per request (1 upstream call)',
    expectedCalls: 1,
    body: (raw) => () => newRecordsBody('S4', clean(raw), next()),
    check: (raw) => kycUserBody(`usrcheck${clean(raw)}`),
    referencePath: '/graphql',
  },
];
/** The scenarios chosen (`--scenarios`), in their order above. */
const CHOSEN_SCENARIOS = SCENARIOS.filter((s) => SCENARIO_IDS.includes(s.id));

interface TargetResult extends LoadResult {
  upstreamCallsPerRequest: number;
  /** Upstream calls the stub answered during the cell. */
  upstreamCalls: number;
  maxRssMB: number;
  /** CPU of the process under test, as a share of one core. */
  cpu: number;
  stubCpu: number;
  /** Answers that were not a 2xx or held GraphQL errors, plus socket errors and timeouts. */
  errorAnswers: number;
  /** The tables: req/s of each round, in the order measured (the figures are their medians). */
  roundsRps?: number[];
  /**
   * The CPU the other systems on core 0 used while this one was loaded (warm-up included), as a
   * share of the core (the median of the rounds'): they wait idle, not stopped.
   */
  othersCpu?: number;
  /** p99 of each round (ms), in the order measured: the table's p99 is their median. */
  roundsP99Ms?: number[];
  /** The slowest answer of each round (ms), in the order measured. */
  roundsMaxMs?: number[];
}

/**
 * One system's figures of a cell from its rounds: rates, latencies and CPU the medians of the
 * rounds', the largest RSS and slowest answer, the counts summed.
 */
function ofRounds(rounds: TargetResult[]): TargetResult {
  const mid = (pick: (r: TargetResult) => number) => median(rounds.map(pick));
  const sum = (pick: (r: TargetResult) => number) =>
    rounds.reduce((total, r) => total + pick(r), 0);
  const sent = sum((r) => r.sent);
  const upstreamCalls = sum((r) => r.upstreamCalls);
  return {
    requests: sum((r) => r.requests),
    sent,
    durationS: sum((r) => r.durationS),
    rps: mid((r) => r.rps),
    p50Ms: mid((r) => r.p50Ms),
    p90Ms: mid((r) => r.p90Ms),
    p99Ms: mid((r) => r.p99Ms),
    maxMs: Math.max(...rounds.map((r) => r.maxMs)),
    meanMs: mid((r) => r.meanMs),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    graphqlErrors: sum((r) => r.graphqlErrors),
    loadgenCpu: mid((r) => r.loadgenCpu),
    upstreamCallsPerRequest: upstreamCalls / Math.max(1, sent),
    upstreamCalls,
    maxRssMB: Math.max(...rounds.map((r) => r.maxRssMB)),
    cpu: mid((r) => r.cpu),
    stubCpu: mid((r) => r.stubCpu),
    othersCpu: mid((r) => r.othersCpu ?? 0),
    errorAnswers: sum((r) => r.errorAnswers),
    roundsRps: rounds.map((r) => Math.round(r.rps)),
    roundsP99Ms: rounds.map((r) => round(r.p99Ms, 1)),
    roundsMaxMs: rounds.map((r) => round(r.maxMs, 1)),
  };
}

/** One scenario at one connection count, every system. */
interface Cell {
  id: string;
  title: string;
  expectedCalls: number;
  /** Results by system name (gateway, reference, peers). */
  systems: Record<string, TargetResult>;
  warnings: string[];
}

interface Run {
  auth: Auth;
  connections: number;
  cells: Cell[];
}

/** The headers of every request, or of each request in turn. */
type Headers = Record<string, string> | (() => Record<string, string>);

/** `load`'s options for `given`. */
function headersOf(given: Headers): Pick<LoadOptions, 'headers' | 'headersEach'> {
  return typeof given === 'function' ? { headers: {}, headersEach: given } : { headers: given };
}

/**
 * Warm-up, then a timed run against `target`, once `idle` (the other systems on core 0) are quiet
 * (their leftover work, a major GC after their own run say, has ended). They are not stopped
 * (see {@link untilQuiet}); what they use meanwhile is reported (`othersCpu`).
 */
async function measure(
  target: Started,
  idle: Started[],
  url: string,
  stub: Started,
  body: GraphQLBody | (() => GraphQLBody),
  headers: Headers,
  connections: number,
  timing: { warmupS: number; durationS: number } = { warmupS: WARMUP_S, durationS: DURATION_S },
): Promise<TargetResult> {
  const pids = idle.map((other) => other.pid);
  await untilQuiet(pids);
  const othersCpu0 = cpuSecondsOfAll(pids);
  const t0 = performance.now();
  const result = await timed(target, url, stub, body, headers, connections, timing);
  const othersCpu = (cpuSecondsOfAll(pids) - othersCpu0) / ((performance.now() - t0) / 1000);
  return { ...result, othersCpu };
}

async function timed(
  target: Started,
  url: string,
  stub: Started,
  body: GraphQLBody | (() => GraphQLBody),
  given: Headers,
  connections: number,
  { warmupS, durationS }: { warmupS: number; durationS: number } = {
    warmupS: WARMUP_S,
    durationS: DURATION_S,
  },
): Promise<TargetResult> {
  const headers = headersOf(given);
  if (warmupS > 0) {
    await load({ url, connections, durationS: warmupS, body, ...headers });
  }
  await settleStub(stub.port);
  await resetStub(stub.port);
  const cpu0 = cpuSeconds(target.pid);
  const stubCpu0 = cpuSeconds(stub.pid);
  const t0 = performance.now();
  const rss = sampleRss(target.pid);
  const result = await load({ url, connections, durationS, body, ...headers });
  const maxRss = rss.stop();
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = (cpuSeconds(target.pid) - cpu0) / elapsed;
  const stubCpu = (cpuSeconds(stub.pid) - stubCpu0) / elapsed;
  const stats = await settleStub(stub.port);
  return {
    ...result,
    // Per request sent: requests cut off at the end may have made their upstream calls (those
    // already in flight when their client left).
    upstreamCallsPerRequest: (stats.payment + stats.kyc) / Math.max(1, result.sent),
    upstreamCalls: stats.payment + stats.kyc,
    maxRssMB: maxRss / 1024 / 1024,
    cpu,
    stubCpu,
    errorAnswers: result.non2xx + result.errors + result.timeouts + result.graphqlErrors,
  };
}

/**
 * {@link START_WARMUP_S}: each of `targets` in turn, once the others on its core are quiet, loaded with
 * every chosen scenario for that long at the largest connection count (nothing recorded).
 */
async function startWarmUp(
  targets: Started[],
  everyone: Started[],
  auth: Auth,
  headersOf: (target: Started) => Record<string, string>,
): Promise<void> {
  if (START_WARMUP_S <= 0) return;
  const connections = Math.max(...CONNECTION_COUNTS);
  for (const target of targets) {
    await untilQuiet(everyone.filter((other) => other !== target).map((other) => other.pid));
    for (const scenario of CHOSEN_SCENARIOS) {
      const path = target.name === 'reference' ? scenario.referencePath : '/graphql';
      await load({
        url: `http://127.0.0.1:${target.port}${path}`,
        connections,
        durationS: START_WARMUP_S,
        body: scenario.body(`W${scenario.id}${auth === 'on' ? 'A' : 'N'}${target.name}`),
        headers: headersOf(target),
      });
    }
  }
  console.log(
    `auth ${auth}: ${targets.map((t) => t.name).join(', ')} warmed up (${START_WARMUP_S} s of each scenario, ${connections} connections)`,
  );
}

/** One request to both; `name`'s data must deep-equal the reference's and hold records. */
async function checkEquivalent(
  scenario: Scenario,
  name: string,
  url: string,
  referenceUrl: string,
  body: GraphQLBody,
  headers: Record<string, string>,
): Promise<void> {
  const [fromSystem, fromReference] = await Promise.all([
    post(url, body, headers),
    post(referenceUrl, body, {}),
  ]);
  if (fromSystem.errors !== undefined || !isDeepStrictEqual(fromSystem, fromReference)) {
    throw new Error(
      `${scenario.id}: ${name}'s answer differs from the reference's.\n` +
        `${name}: ${JSON.stringify(fromSystem)}\nreference: ${JSON.stringify(fromReference)}`,
    );
  }
  // A null record would mean the stub did not answer: no equivalent work would be measured.
  const records = Object.values((fromSystem.data ?? {}) as Record<string, unknown>).flat();
  if (records.length === 0 || records.some((record) => record === null)) {
    throw new Error(`${scenario.id}: the check answered no record: ${JSON.stringify(fromSystem)}`);
  }
}

function fmt(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** What may make a cell's figures unreliable, or wrong. */
function warningsOf(cell: Cell): string[] {
  const warnings: string[] = [];
  for (const [name, r] of Object.entries(cell.systems)) {
    if (r.errorAnswers > 0) {
      warnings.push(
        `${name}: ${r.non2xx} non-2xx answers, ${r.graphqlErrors} answers with GraphQL errors, ${r.errors} socket errors, ${r.timeouts} timeouts`,
      );
    }
    const core1 = r.stubCpu + r.loadgenCpu;
    if (core1 > 0.9) {
      warnings.push(
        `${name}: core 1 was busy ${Math.round(core1 * 100)} % (stub ${Math.round(r.stubCpu * 100)} % + load generator ${Math.round(r.loadgenCpu * 100)} %), so this figure may be bounded by the load side`,
      );
    }
    if (r.cpu < 0.85) warnings.push(`${name}: used only ${Math.round(r.cpu * 100)} % of its core`);
    if ((r.othersCpu ?? 0) > 0.05) {
      warnings.push(
        `${name}: the other systems used ${Math.round((r.othersCpu ?? 0) * 100)} % of core 0 meanwhile`,
      );
    }
    if (!callsExact(r, cell.expectedCalls)) {
      warnings.push(
        `${name}: ${r.upstreamCalls} upstream calls for ${r.requests} answers and ${r.sent} requests sent, expected ${cell.expectedCalls} per request`,
      );
    }
  }
  return warnings;
}

/**
 * The calls a system made match the scenario: every request answered made its calls, and no
 * request more. Those cut off at the end of the cell (sent, never answered) made theirs or not:
 * a system may drop the calls still waiting for a request whose client has gone.
 */
function callsExact(r: TargetResult, expected: number): boolean {
  return r.upstreamCalls >= expected * r.requests && r.upstreamCalls <= expected * r.sent;
}

const ratio = (a: TargetResult | undefined, b: TargetResult | undefined): number =>
  a === undefined || b === undefined ? Number.NaN : a.rps / b.rps;

/** The headline: gateway ÷ mercurius-prod and each system ÷ the limit, scenario by scenario. */
function headline(runs: Run[]): string {
  const ids = SCENARIO_IDS;
  const lines = [`| | ${ids.join(' | ')} |`, `| --- | ${ids.map(() => '-:').join(' | ')} |`];
  for (const run of runs) {
    const cell = (id: string) => run.cells.find((c) => c.id === id);
    const label = `auth ${run.auth}, ${run.connections} conn.`;
    if (PEERS.includes(MAIN_PEER)) {
      lines.push(
        `| gateway ÷ ${MAIN_PEER}, ${label} | ${ids.map((id) => fmt(ratio(cell(id)?.systems.gateway, cell(id)?.systems[MAIN_PEER]))).join(' | ')} |`,
      );
    }
    if (SYSTEMS.includes('reference')) {
      for (const name of SYSTEMS.filter((n) => n !== 'reference')) {
        lines.push(
          `| ${name} ÷ limit, ${label} | ${ids.map((id) => fmt(ratio(cell(id)?.systems[name], cell(id)?.systems.reference))).join(' | ')} |`,
        );
      }
    }
  }
  return lines.join('\n');
}

/** Every system in one run (one auth mode, one connection count). */
function detail(run: Run): string {
  const lines = [
    `#### Authentication ${run.auth}, ${run.connections} connections`,
    '',
    '| Scenario | System | req/s | ÷ limit | Gateway ÷ system | p50 / p99 ms | Max RSS MB | Upstream calls/req | Error answers | CPU of its core |',
    '| --- | --- | -: | -: | -: | -: | -: | -: | -: | -: |',
  ];
  for (const cell of run.cells) {
    const gateway = cell.systems.gateway;
    const reference = cell.systems.reference;
    for (const [name, t] of Object.entries(cell.systems)) {
      lines.push(
        `| ${cell.id} | ${name} | ${fmt(t.rps, 0)} | ${fmt(ratio(t, reference))} | ${fmt(ratio(gateway, t))} | ${fmt(t.p50Ms, 1)} / ${fmt(t.p99Ms, 1)} | ${fmt(t.maxRssMB, 0)} | ${fmt(t.upstreamCallsPerRequest, 2)} | ${t.errorAnswers} | ${Math.round(t.cpu * 100)} % |`,
      );
    }
  }
  const warnings = run.cells.flatMap((c) => c.warnings.map((w) => `- ${c.id} ${w}`));
  if (warnings.length > 0) lines.push('', 'Notes:', ...warnings);
  return lines.join('\n');
}

/** The targets, auth on: gateway ≥ 1.0× mercurius-prod, p99 and RSS no higher, etc. */
interface Targets {
  auth: Auth;
  connections: number;
  id: string;
  ratio: number;
  ratioMet: boolean;
  p99Met: boolean;
  rssMet: boolean;
  callsMet: boolean;
  noErrors: boolean;
}

function targetsOf(runs: Run[]): Targets[] {
  const out: Targets[] = [];
  for (const run of runs) {
    for (const cell of run.cells) {
      const g = cell.systems.gateway;
      const p = cell.systems[MAIN_PEER];
      if (g === undefined || p === undefined) continue;
      const r = g.rps / p.rps;
      out.push({
        auth: run.auth,
        connections: run.connections,
        id: cell.id,
        ratio: round(r, 3),
        ratioMet: r >= 1,
        p99Met: g.p99Ms <= p.p99Ms,
        rssMet: g.maxRssMB <= p.maxRssMB,
        callsMet: callsExact(g, cell.expectedCalls),
        noErrors: g.errorAnswers === 0,
      });
    }
  }
  return out;
}

function targetTable(targets: Targets[]): string {
  const yes = (met: boolean) => (met ? 'yes' : '**no**');
  const lines = [
    `| Auth | Conn. | Scenario | Gateway ÷ ${MAIN_PEER} ≥ 1 | p99 ≤ its p99 | RSS ≤ its RSS | Upstream calls exact | No error answers |`,
    '| --- | -: | --- | :-: | :-: | :-: | :-: | :-: |',
  ];
  for (const t of targets) {
    lines.push(
      `| ${t.auth} | ${t.connections} | ${t.id} | ${fmt(t.ratio)} ${yes(t.ratioMet)} | ${yes(t.p99Met)} | ${yes(t.rssMet)} | ${yes(t.callsMet)} | ${yes(t.noErrors)} |`,
    );
  }
  return lines.join('\n');
}

/** Node flags and environment added to a system's own (for the profilers). */
interface Extra {
  nodeFlags?: string[];
  env?: Record<string, string>;
}

/** Starts one peer on core 0 against the stub, with the run's authentication. */
function startPeer(name: string, stub: Started, auth: Auth, extra: Extra = {}): Promise<Started> {
  mkdirSync(LOG_DIR, { recursive: true });
  return startNode({
    name,
    script: `bench/peers/${name}.ts`,
    core: 0,
    nodeFlags: [...NODE_FLAGS, ...(extra.nodeFlags ?? [])],
    env: { ...peerEnv(stub.port, name, auth === 'on'), ...extra.env },
    portPattern: JSON_PORT,
  });
}

function startGateway(stub: Started, auth: Auth, extra: Extra = {}) {
  return startNode({
    name: 'gateway',
    script: 'src/main.ts',
    core: 0,
    nodeFlags: [...NODE_FLAGS, ...(extra.nodeFlags ?? [])],
    env: {
      ...gatewayEnv(
        stub.port,
        auth === 'on' ? { AUTH_JWT_SECRET: BENCH_JWT_SECRET } : { AUTH_DISABLED: 'true' },
      ),
      ...extra.env,
    },
    portPattern: GATEWAY_PORT,
  });
}

async function profile(stub: Started, reference: Started): Promise<void> {
  const dir = `${ROOT}bench/results/profiles`;
  mkdirSync(dir, { recursive: true });
  const referenceBase = `http://127.0.0.1:${reference.port}`;
  const report: string[] = [];
  for (const scenario of CHOSEN_SCENARIOS) {
    const name = `gateway-${scenario.id}.cpuprofile`;
    const auth = AUTH_MODES[0] ?? 'on';
    const headers: Record<string, string> =
      auth === 'on' ? { authorization: `Bearer ${await benchToken()}` } : {};
    const gateway = await startGateway(stub, auth, {
      nodeFlags: [
        '--cpu-prof',
        `--cpu-prof-dir=${dir}`,
        `--cpu-prof-name=${name}`,
        '--cpu-prof-interval=250',
      ],
    });
    const gatewayUrl = `http://127.0.0.1:${gateway.port}/graphql`;
    const tag = `P${scenario.id}`;
    await checkEquivalent(
      scenario,
      'gateway',
      gatewayUrl,
      referenceBase + scenario.referencePath,
      scenario.check(tag),
      headers,
    );
    const result = await measure(
      gateway,
      [reference],
      gatewayUrl,
      stub,
      scenario.body(tag),
      headers,
      CONNECTIONS,
    );
    await gateway.stop();
    console.log(
      `${scenario.id} auth ${auth} under the profiler: ${fmt(result.rps, 0)} req/s, p99 ${fmt(result.p99Ms)} ms`,
    );
    report.push(
      renderSummary(
        `${scenario.id} — ${scenario.title}, auth ${auth}, ${CONNECTIONS} connections (${fmt(result.rps, 0)} req/s under the profiler)`,
        summarise(`${dir}/${name}`, 20),
      ),
    );
  }
  report.push(
    [
      `### What each production feature takes of the busy time (auth ${AUTH_MODES[0] ?? 'on'}, ${CONNECTIONS} connections)`,
      '',
      renderFeatureShares(
        CHOSEN_SCENARIOS.map((s) => ({ title: s.id, file: `${dir}/gateway-${s.id}.cpuprofile` })),
      ),
      '',
      "On the stack: samples with one of the feature's frames anywhere on the stack. Own time (the features that wrap the upstream call): samples whose innermost JavaScript frame is the feature's. Neither counts the garbage collector's work on what the feature allocates or keeps, nor V8's threads.",
      '',
    ].join('\n'),
  );
  const text = report.join('\n');
  writeFileSync(`${ROOT}bench/results/profile-summary.md`, `${text}\n`);
  console.log(`\n${text}`);
  console.log(`Profiles and this summary are under ${dir}/ and bench/results/profile-summary.md`);
}

/** A system of an allocation run: how to start it, and its requests' headers. */
interface AllocationSystem {
  name: string;
  start: (extra: Extra) => Promise<Started>;
  headers: Headers;
}

/** Requests per scenario in an allocation run: each sampled run has exactly this many. */
const ALLOCATION_REQUESTS: Record<string, number> = { S1: 3000, S2: 6000, S3: 300, S4: 3000 };

/** Sends SIGUSR2 to a process preloading bench/alloc-probe.ts and waits for its `line`. */
async function signalProbe(target: Started, line: string): Promise<void> {
  const from = target.outputBytes();
  process.kill(target.pid, 'SIGUSR2');
  const until = Date.now() + 60_000;
  while (!target.outputFrom(from).includes(line)) {
    if (Date.now() > until) throw new Error(`${target.name} did not answer: ${line}`);
    await sleep(20);
  }
}

/**
 * Bytes allocated per request, gateway and peers, scenario by scenario: each system warms up,
 * then the sampling heap profiler runs over exactly ALLOCATION_REQUESTS[scenario] requests.
 */
async function allocations(stub: Started): Promise<void> {
  const dir = `${ROOT}bench/results/allocations`;
  mkdirSync(dir, { recursive: true });
  const report: string[] = [];
  const table = [
    `| Auth | Scenario | System | KB allocated per request | ${BUSINESS_COUNTS ? 'One business' : 'Gateway'} ÷ system |`,
    '| --- | --- | --- | -: | -: |',
  ];
  // With --businesses: the gateway serving one business and each count, auth on (tokens name
  // their business), instead of the gateway and its peers.
  const authModes: Auth[] = BUSINESS_COUNTS ? ['on'] : AUTH_MODES;
  for (const auth of authModes) {
    const token: Record<string, string> =
      auth === 'on' ? { authorization: `Bearer ${await benchToken()}` } : {};
    const systems: AllocationSystem[] = BUSINESS_COUNTS
      ? await Promise.all(
          [1, ...BUSINESS_COUNTS].map(async (count) => ({
            name: businessGatewayName(count),
            start: (extra: Extra) => startBusinessGateway(stub, count, extra),
            headers: await headersInTurn(count),
          })),
        )
      : ['gateway', ...PEERS].map((name) => ({
          name,
          start: (extra: Extra) =>
            name === 'gateway'
              ? startGateway(stub, auth, extra)
              : startPeer(name, stub, auth, extra),
          headers: token,
        }));
    const baseline = systems[0]?.name ?? 'gateway';
    const perSystem = new Map<string, Map<string, number>>();
    for (const { name, start, headers: given } of systems) {
      const headers = headersOf(given);
      const extra = (id: string) => ({
        nodeFlags: ['--import', './bench/alloc-probe.ts'],
        env: { ALLOC_PROBE_FILE: `${dir}/${name}-${id}-auth-${auth}.heapprofile` },
      });
      const bytes = new Map<string, number>();
      for (const scenario of CHOSEN_SCENARIOS) {
        // A process per scenario: the probe writes one file per process.
        const target = await start(extra(scenario.id));
        const url = `http://127.0.0.1:${target.port}/graphql`;
        const tag = `${scenario.id}${auth === 'on' ? 'A' : 'N'}M${name}`;
        const body = scenario.body(tag);
        await load({
          url,
          connections: CONNECTIONS,
          durationS: Math.max(1, WARMUP_S),
          body,
          ...headers,
        });
        await signalProbe(target, 'ALLOC_PROBE started');
        const amount = ALLOCATION_REQUESTS[scenario.id] ?? 1000;
        const result = await load({
          url,
          connections: CONNECTIONS,
          durationS: 0,
          amount,
          body,
          ...headers,
        });
        await signalProbe(target, 'ALLOC_PROBE written');
        await target.stop();
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(
            `${name} ${scenario.id}: ${result.non2xx} non-2xx answers, ${result.errors} errors`,
          );
        }
        const summary = summariseAllocations(
          extra(scenario.id).env.ALLOC_PROBE_FILE,
          result.requests,
          20,
        );
        bytes.set(scenario.id, summary.bytesPerRequest);
        report.push(renderAllocations(`${name}, ${scenario.id}, auth ${auth}`, summary));
        console.log(
          `auth ${auth} ${scenario.id}: ${name} ${fmt(summary.bytesPerRequest / 1024, 1)} KB allocated per request`,
        );
      }
      perSystem.set(name, bytes);
    }
    for (const scenario of CHOSEN_SCENARIOS) {
      const gateway = perSystem.get(baseline)?.get(scenario.id) ?? Number.NaN;
      for (const [name, bytes] of perSystem) {
        const value = bytes.get(scenario.id) ?? Number.NaN;
        table.push(
          `| ${auth} | ${scenario.id} | ${name} | ${fmt(value / 1024, 1)} | ${fmt(gateway / value)} |`,
        );
      }
    }
  }
  const text = [table.join('\n'), ...report].join('\n\n');
  writeFileSync(`${ROOT}bench/results/allocation-summary.md`, `${text}\n`);
  console.log(`\n${table.join('\n')}\n`);
  console.log('Per function and package: bench/results/allocation-summary.md');
}

/** The middle value (the upper of the two middle ones for an even count). */
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/**
 * A gateway of the features mode: the bare pipeline, plus `feature` when given; with
 * `--marginal`, the production pipeline, less `feature` when given.
 */
function startFeatureGateway(stub: Started, feature: Feature | undefined): Promise<Started> {
  const { env, token } = featureVariant(feature);
  const name =
    feature === undefined
      ? `gateway-${MARGINAL ? 'full' : 'bare'}`
      : `gateway${MARGINAL ? '-' : '+'}${feature.name.split(' ')[0]}`;
  return startNode({
    name,
    script: 'src/main.ts',
    core: 0,
    nodeFlags: NODE_FLAGS,
    env: {
      ...gatewayEnv(stub.port, {}),
      ...env,
      ...(token && { AUTH_JWT_SECRET: BENCH_JWT_SECRET }),
    },
    portPattern: GATEWAY_PORT,
  });
}

/** The environment of a features-mode gateway, and whether its requests carry the token. */
function featureVariant(feature: Feature | undefined): {
  env: Record<string, string>;
  token: boolean;
} {
  if (!MARGINAL) return { env: { ...BARE_ENV, ...feature?.env }, token: feature?.token === true };
  if (feature === undefined) return { env: FULL_ENV, token: true };
  return { env: { ...FULL_ENV, ...feature.without.env }, token: feature.without.token };
}

/** Warm-up of each short cell of the features mode: the paused process's sockets and caches. */
const FEATURE_CELL_WARMUP_S = 1;

/**
 * The features mode: per scenario, the bare pipeline against the bare pipeline plus each
 * feature alone. In each of PAIRS rounds both processes are loaded at the same time, each by its
 * own CONNECTIONS, on the core they share: whatever the machine's speed does during a round, it
 * does to both alike (cells taken in turns, even seconds apart, differed by a tenth on this
 * machine with nothing changed). Each one's µs of CPU per request is then compared within the
 * round. Both processes of a feature's rounds start together, for that feature alone. Two
 * processes of the same pipeline are measured the same way: their share is the noise floor of
 * the run.
 */
async function features(stub: Started, reference: Started): Promise<void> {
  const bearer = { authorization: `Bearer ${await benchToken()}` };
  const headersFor = (feature: Feature | undefined) =>
    featureVariant(feature).token ? bearer : {};
  const baseHeaders = headersFor(undefined);
  const measured = [NOISE_FLOOR, ...CHOSEN_FEATURES];
  const perFeatureS = WARMUP_S + 1 + PAIRS * (FEATURE_CELL_WARMUP_S + DURATION_S + 0.6) + 5;
  const minutes = Math.ceil((CHOSEN_SCENARIOS.length * (measured.length * perFeatureS + 15)) / 60);
  console.log(
    `bench --features${MARGINAL ? ' --marginal' : ''}${RATE === undefined ? '' : ` --rate ${RATE}`}: ${PAIRS} rounds of ${DURATION_S} s with both processes loaded at once per feature (after ${WARMUP_S} s warm-up), ${CONNECTIONS} connections${RATE === undefined ? '' : `, ${RATE} req/s offered to each`}, scenarios ${SCENARIO_IDS.join(', ')}; about ${minutes} minutes`,
  );
  const cell = { warmupS: FEATURE_CELL_WARMUP_S, durationS: DURATION_S };
  const results: Array<{
    id: string;
    limitRps: number;
    bareRps: number[];
    bareCpuUs: number[];
    features: Array<{
      name: string;
      pairs: PairResult[];
      share: number;
      cpuShare: number;
      spread: [number, number];
    }>;
  }> = [];
  for (const scenario of CHOSEN_SCENARIOS) {
    const tag = `F${scenario.id}`;
    const referenceUrl = `http://127.0.0.1:${reference.port}${scenario.referencePath}`;
    const bare = await startFeatureGateway(stub, undefined);
    const bareUrl = `http://127.0.0.1:${bare.port}/graphql`;
    await checkEquivalent(
      scenario,
      bare.name,
      bareUrl,
      referenceUrl,
      scenario.check(tag),
      baseHeaders,
    );
    const limit = await measure(
      reference,
      [bare],
      referenceUrl,
      stub,
      scenario.body(`${tag}R`),
      {},
      CONNECTIONS,
    );
    // The bare pipeline alone, for its req/s beside the limit's (the rounds share the core).
    const alone = await measure(
      bare,
      [reference],
      bareUrl,
      stub,
      scenario.body(`${tag}B`),
      baseHeaders,
      CONNECTIONS,
    );
    // Each feature's rounds have a base process of their own, started with the variant: a process
    // that had served the earlier features (a full record cache, a grown heap) spent up to a
    // tenth more CPU per request than a second one of the same pipeline started later.
    await bare.stop();
    const row = {
      id: scenario.id,
      limitRps: limit.rps,
      bareRps: [alone.rps],
      bareCpuUs: [] as number[],
      features: [] as (typeof results)[number]['features'],
    };
    for (const feature of measured) {
      const base = await startFeatureGateway(stub, undefined);
      const baseUrl = `http://127.0.0.1:${base.port}/graphql`;
      const variant = await startFeatureGateway(stub, feature);
      const variantUrl = `http://127.0.0.1:${variant.port}/graphql`;
      const headers = headersFor(feature);
      await checkEquivalent(
        scenario,
        variant.name,
        variantUrl,
        referenceUrl,
        scenario.check(`${tag}V`),
        headers,
      );
      const targets = [
        { started: base, url: baseUrl, headers: baseHeaders },
        { started: variant, url: variantUrl, headers },
      ];
      /** Both loaded at once (the reference paused): req/s and µs of CPU per request of each. */
      const together = async (round: number | 'warm', { warmupS, durationS } = cell) => {
        reference.pause();
        try {
          const loadAll = (seconds: number) =>
            Promise.all(
              targets.map((t) =>
                load({
                  url: t.url,
                  connections: CONNECTIONS,
                  durationS: seconds,
                  body: scenario.body(`${tag}${t.started.name}${round}`),
                  ...headersOf(t.headers),
                  ...(RATE !== undefined && { rate: RATE }),
                }),
              ),
            );
          if (warmupS > 0) await loadAll(warmupS);
          const before = targets.map((t) => cpuSeconds(t.started.pid));
          const loaded = await loadAll(durationS);
          const after = targets.map((t) => cpuSeconds(t.started.pid));
          await resetStub(stub.port);
          return loaded.map((r, i) => {
            const name = targets[i]?.started.name ?? '';
            const errors = r.non2xx + r.errors + r.timeouts + r.graphqlErrors;
            if (errors > 0) {
              throw new Error(
                `${scenario.id} ${name}: ${r.non2xx} non-2xx answers, ${r.graphqlErrors} with GraphQL errors, ${r.errors} socket errors, ${r.timeouts} timeouts (log: ${targets[i]?.started.logFile})`,
              );
            }
            // Behind the offered rate: the process (or the load generator) was saturated, and
            // the round no longer compares the same load.
            if (RATE !== undefined && round !== 'warm' && r.rps < 0.95 * RATE) {
              console.log(
                `${scenario.id} ${name}, round ${round}: answered ${fmt(r.rps, 0)} of the ${RATE} req/s offered (saturated; use a lower --rate)`,
              );
            }
            const cpu = (after[i] ?? 0) - (before[i] ?? 0);
            return { rps: r.rps, cpuUs: (cpu / Math.max(1, r.requests)) * 1e6 };
          });
        } finally {
          reference.resume();
        }
      };
      // Both just started: warmed up alike, at once, before the first round.
      await together('warm', { warmupS: WARMUP_S, durationS: 1 });
      const pairs: PairResult[] = [];
      for (let round = 0; round < PAIRS; round++) {
        const [baseResult, variantResult] = await together(round);
        if (!baseResult || !variantResult) throw new Error('a round measured nothing');
        // `--marginal`: the base process has the feature, the variant lacks it.
        const [bareResult, featureResult] = MARGINAL
          ? [variantResult, baseResult]
          : [baseResult, variantResult];
        pairs.push({
          bareRps: bareResult.rps,
          featureRps: featureResult.rps,
          bareCpuUs: bareResult.cpuUs,
          featureCpuUs: featureResult.cpuUs,
        });
        row.bareCpuUs.push(baseResult.cpuUs);
      }
      await Promise.all([base.stop(), variant.stop()]);
      const cost = share(pairs);
      const cpuCost = cpuShare(pairs);
      const spread = cpuSpread(pairs);
      row.features.push({ name: feature.name, pairs, share: cost, cpuShare: cpuCost, spread });
      console.log(
        `${scenario.id} ${feature.name}: req/s share ${fmt(cost * 100, 1)} %, CPU/request share ${fmt(cpuCost * 100, 1)} % (middle half ${fmt(spread[0] * 100, 1)} to ${fmt(spread[1] * 100, 1)} %); µs CPU/request per round, bare → feature: ${pairs.map((p) => `${fmt(p.bareCpuUs ?? Number.NaN, 0)} → ${fmt(p.featureCpuUs ?? Number.NaN, 0)}`).join(', ')}`,
      );
    }
    results.push(row);
  }
  const ids = results.map((r) => r.id);
  const lines = [
    `| ${MARGINAL ? 'Feature taken alone out of the production pipeline' : 'Feature added alone to the bare pipeline'} | ${ids.map((id) => `${id} share (req/s) | ${id} share (CPU/request), middle half of the rounds`).join(' | ')} |`,
    `| --- | ${ids.map(() => '-: | -:').join(' | ')} |`,
    `| ${MARGINAL ? 'production pipeline' : 'bare pipeline'}, req/s (÷ limit) and µs CPU/request | ${results.map((r) => `${fmt(median(r.bareRps), 0)} (${fmt(median(r.bareRps) / r.limitRps)}) | ${fmt(median(r.bareCpuUs), 0)} µs`).join(' | ')} |`,
  ];
  for (const feature of measured) {
    lines.push(
      `| ${feature.name} | ${results
        .map((r) => {
          const found = r.features.find((f) => f.name === feature.name);
          const [low, high] = found?.spread ?? [Number.NaN, Number.NaN];
          return `${fmt((found?.share ?? Number.NaN) * 100, 1)} % | ${fmt((found?.cpuShare ?? Number.NaN) * 100, 1)} % (${fmt(low * 100, 1)} to ${fmt(high * 100, 1)})`;
        })
        .join(' | ')} |`,
    );
  }
  const base = MARGINAL ? 'production' : 'bare';
  const text = [
    lines.join('\n'),
    '',
    `${
      MARGINAL
        ? 'Share (req/s): 1 − (req/s of the production pipeline ÷ req/s without the feature); share (CPU/request): 1 − (µs of CPU per request without the feature ÷ of the production pipeline): what the feature adds to the pipeline as production runs it.'
        : 'Share (req/s): 1 − (req/s with the feature ÷ req/s of the bare pipeline); share (CPU/request): 1 − (µs of CPU per request of the bare pipeline ÷ with the feature).'
    } Each the median of ${PAIRS} rounds, a round being ${DURATION_S} s of load on both processes at once, ${CONNECTIONS} connections each (after ${FEATURE_CELL_WARMUP_S} s of load), on the core they share; in brackets the middle half of the rounds' CPU shares. The ${base} pipeline's req/s is its own, measured alone. "${NOISE_FLOOR.name}" is a second process of the ${base} pipeline measured the same way: shares within its range are not told apart from noise.${MARGINAL ? ' "all together" is the production pipeline against the bare one.' : ''}`,
    ...(RATE === undefined
      ? []
      : [
          `Each process of a round was offered ${RATE} req/s (\`--rate\`): the req/s shares only show whether one fell behind; read the CPU/request shares. A process's CPU time is read in clock ticks of ${fmt(CPU_TICK_S * 1000, 0)} ms: at ${RATE} req/s for ${DURATION_S} s a round's µs of CPU per request moves in steps of ${fmt((CPU_TICK_S * 1e6) / (RATE * DURATION_S), 1)} µs (\`--duration\` makes them smaller).`,
        ]),
    'Not switchable yet:',
    ...NOT_SWITCHABLE.map((n) => `- ${n.name}: ${n.why}`),
  ].join('\n');
  mkdirSync(`${ROOT}bench/results`, { recursive: true });
  const file = `features${MARGINAL ? '-marginal' : ''}${RATE === undefined ? '' : '-rate'}.json`;
  writeFileSync(
    `${ROOT}bench/results/${file}`,
    `${JSON.stringify({ finishedAt: new Date().toISOString(), marginal: MARGINAL, ...(RATE !== undefined && { rate: RATE }), durationS: DURATION_S, warmupS: WARMUP_S, cellWarmupS: FEATURE_CELL_WARMUP_S, connections: CONNECTIONS, rounds: PAIRS, systemsNode: NODE_VERSION, results }, null, 2)}\n`,
  );
  console.log(`\n${text}\n\nWritten to bench/results/${file}`);
}

/** The name of a gateway of the `--businesses` mode. */
function businessGatewayName(count: number): string {
  return count === 1 ? 'gateway-1-business' : `gateway-${count}-businesses`;
}

/** A gateway of the `--businesses` mode: one business, or `count` from a businesses file. */
function startBusinessGateway(stub: Started, count: number, extra: Extra = {}): Promise<Started> {
  return startNode({
    name: businessGatewayName(count),
    script: 'src/main.ts',
    core: 0,
    nodeFlags: [...NODE_FLAGS, ...(extra.nodeFlags ?? [])],
    env: {
      ...businessesEnv(stub.port, count, { AUTH_JWT_SECRET: BENCH_JWT_SECRET }),
      ...extra.env,
    },
    portPattern: GATEWAY_PORT,
  });
}

/**
 * The `--businesses` mode: per scenario, a gateway serving one business and one serving each
 * count of BUSINESS_COUNTS, measured in turn (the order rotating each round), the requests
 * spread over the businesses; prints the medians and their ratio to one business.
 */
async function businessRuns(stub: Started, reference: Started, counts: number[]): Promise<void> {
  const all = [1, ...counts];
  const minutes = Math.ceil(
    (CHOSEN_SCENARIOS.length * all.length * BUSINESS_ROUNDS * (WARMUP_S + DURATION_S + 2)) / 60,
  );
  console.log(
    `bench --businesses: 1, ${counts.join(', ')} businesses, ${BUSINESS_ROUNDS} rounds, auth on, ${CONNECTIONS} connections, scenarios ${SCENARIO_IDS.join(', ')}; about ${minutes} minutes`,
  );
  const rows: Array<{
    id: string;
    businesses: number;
    rps: number[];
    p50Ms: number[];
    p99Ms: number[];
    cpuUs: number[];
    maxRssMB: number[];
    callsPerRequest: number[];
  }> = [];
  for (const scenario of CHOSEN_SCENARIOS) {
    const referenceUrl = `http://127.0.0.1:${reference.port}${scenario.referencePath}`;
    const gateways: Array<{
      count: number;
      target: Started;
      headers: () => Record<string, string>;
    }> = [];
    for (const count of all) {
      const target = await startBusinessGateway(stub, count);
      const headers = await headersInTurn(count);
      const url = `http://127.0.0.1:${target.port}/graphql`;
      // Every business answers the reference's records (each through its own credentials).
      for (let i = 0; i < Math.min(count, 3); i++) {
        await checkEquivalent(
          scenario,
          target.name,
          url,
          referenceUrl,
          scenario.check(`B${scenario.id}x${count}x${i}`),
          headers(),
        );
      }
      gateways.push({ count, target, headers });
    }
    const results = new Map<number, TargetResult[]>(all.map((count) => [count, []]));
    for (let round = 0; round < BUSINESS_ROUNDS; round++) {
      const order = [
        ...gateways.slice(round % all.length),
        ...gateways.slice(0, round % all.length),
      ];
      for (const { count, target, headers } of order) {
        const result = await measure(
          target,
          [reference, ...gateways.map((g) => g.target).filter((other) => other !== target)],
          `http://127.0.0.1:${target.port}/graphql`,
          stub,
          scenario.body(`B${scenario.id}x${count}r${round}`),
          headers,
          CONNECTIONS,
        );
        if (result.errorAnswers > 0) {
          throw new Error(
            `${scenario.id} ${target.name}: ${result.non2xx} non-2xx answers, ${result.graphqlErrors} with GraphQL errors, ${result.errors} socket errors, ${result.timeouts} timeouts (log: ${target.logFile})`,
          );
        }
        results.get(count)?.push(result);
        console.log(
          `${scenario.id}, round ${round + 1}, ${count} business${count === 1 ? '' : 'es'}: ${fmt(result.rps, 0)} req/s, p99 ${fmt(result.p99Ms, 1)} ms, ${fmt((result.cpu / Math.max(1e-9, result.rps)) * 1e6, 0)} µs CPU/request, ${fmt(result.upstreamCallsPerRequest, 2)} calls/req`,
        );
      }
    }
    await Promise.all(gateways.map(({ target }) => target.stop()));
    for (const count of all) {
      const runs = results.get(count) ?? [];
      rows.push({
        id: scenario.id,
        businesses: count,
        rps: runs.map((r) => r.rps),
        p50Ms: runs.map((r) => r.p50Ms),
        p99Ms: runs.map((r) => r.p99Ms),
        cpuUs: runs.map((r) => (r.cpu / Math.max(1e-9, r.rps)) * 1e6),
        maxRssMB: runs.map((r) => r.maxRssMB),
        callsPerRequest: runs.map((r) => r.upstreamCallsPerRequest),
      });
    }
  }
  const lines = [
    '| Scenario | Businesses | req/s | ÷ one business | p50 / p99 ms | µs CPU/request | ÷ one business | Max RSS MB | Upstream calls/req |',
    '| --- | -: | -: | -: | -: | -: | -: | -: | -: |',
  ];
  for (const row of rows) {
    const one = rows.find((r) => r.id === row.id && r.businesses === 1);
    lines.push(
      `| ${row.id} | ${row.businesses} | ${fmt(median(row.rps), 0)} | ${fmt(median(row.rps) / median(one?.rps ?? []))} | ${fmt(median(row.p50Ms), 1)} / ${fmt(median(row.p99Ms), 1)} | ${fmt(median(row.cpuUs), 0)} | ${fmt(median(row.cpuUs) / median(one?.cpuUs ?? []))} | ${fmt(Math.max(...row.maxRssMB), 0)} | ${fmt(median(row.callsPerRequest), 2)} |`,
    );
  }
  const text = [
    lines.join('\n'),
    '',
    `Medians of ${BUSINESS_ROUNDS} rounds (each measures every gateway once, the order rotating), ${DURATION_S} s after ${WARMUP_S} s warm-up per run, ${CONNECTIONS} connections, auth on; with several businesses each request carries the token of the next business in turn. µs CPU/request moves less than req/s when other processes take the core.`,
  ].join('\n');
  mkdirSync(`${ROOT}bench/results`, { recursive: true });
  writeFileSync(
    `${ROOT}bench/results/businesses.json`,
    `${JSON.stringify({ finishedAt: new Date().toISOString(), durationS: DURATION_S, warmupS: WARMUP_S, connections: CONNECTIONS, rounds: BUSINESS_ROUNDS, systemsNode: NODE_VERSION, rows }, null, 2)}\n`,
  );
  console.log(`\n${text}\n\nWritten to bench/results/businesses.json`);
}

/** Starts the systems of one auth mode (the reference runs throughout). */
async function startSystems(stub: Started, auth: Auth): Promise<Started[]> {
  const started: Started[] = [];
  if (SYSTEMS.includes('gateway')) started.push(await startGateway(stub, auth));
  for (const peer of PEERS) started.push(await startPeer(peer, stub, auth));
  return started;
}

/** Roughly how long the tables take: every cell, warm-up and settling included. */
function estimateMinutes(): number {
  const cells = SCENARIO_IDS.length * AUTH_MODES.length * CONNECTION_COUNTS.length * SYSTEMS.length;
  const starts = SYSTEMS.length * AUTH_MODES.length * SCENARIO_IDS.length * START_WARMUP_S;
  const perCell = WARMUP_S + DURATION_S + (ROUNDS - 1) * (ROUND_WARMUP_S + 1) + 2;
  return (cells * perCell + starts + AUTH_MODES.length * 10) / 60;
}

async function main(): Promise<void> {
  // The --businesses mode measures the gateway alone.
  if (!BUSINESS_COUNTS && PEERS.length > 0) setupPeers();
  const pinned = pinSelf(1);
  const layout = HAS_TASKSET
    ? `every system pinned to core 0, stub to core 1, load generator ${pinned ? 'pinned to core 1' : 'NOT pinned (taskset -p refused)'}`
    : 'taskset not found: every process runs unpinned, so the figures are noisier';
  if (!NODE_VERSION.startsWith('v24.')) {
    console.warn(
      `bench: the systems run on Node ${NODE_VERSION}, not Node 24 (npm ci installs it)`,
    );
  }
  console.log(
    `bench: ${DURATION_S} s per cell after ${WARMUP_S} s warm-up${TABLES_MODE ? ` (in ${ROUNDS} rounds, the systems in rotating order; and ${START_WARMUP_S} s of each scenario on each process after its start)` : ''}, ${BUSINESS_COUNTS ? `${CONNECTIONS} connections, auth on, the gateway serving 1, ${BUSINESS_COUNTS.join(', ')} businesses` : `${CONNECTION_COUNTS.join(' and ')} connections, auth ${AUTH_MODES.join(' then ')}, systems ${SYSTEMS.join(', ')}`}, stub latency ${LATENCY_MS} ms; systems on Node ${NODE_VERSION}; ${layout}; output of every system to ${LOG_DIR}/${NODE_FLAGS.length > 0 ? `; node flags for every system: ${NODE_FLAGS.join(' ')}` : ''}`,
  );
  if (TABLES_MODE) console.log(`bench: about ${Math.ceil(estimateMinutes())} minutes`);

  const stub = await startNode({
    name: 'stub',
    script: 'bench/upstream-stub.ts',
    core: 1,
    env: { STUB_LATENCY_MS: String(LATENCY_MS) },
    portPattern: JSON_PORT,
  });
  const reference = await startNode({
    name: 'reference',
    script: 'bench/reference.ts',
    core: 0,
    nodeFlags: NODE_FLAGS,
    env: { UPSTREAM_URL: `http://127.0.0.1:${stub.port}`, UPSTREAM_MAX_CONNECTIONS: '64' },
    portPattern: JSON_PORT,
  });

  if (PROFILE) {
    await profile(stub, reference);
    await Promise.all([reference.stop(), stub.stop()]);
    return;
  }
  if (ALLOCATIONS) {
    await allocations(stub);
    await Promise.all([reference.stop(), stub.stop()]);
    return;
  }
  if (FEATURE_MODE) {
    await features(stub, reference);
    await Promise.all([reference.stop(), stub.stop()]);
    return;
  }
  if (BUSINESS_COUNTS) {
    await businessRuns(stub, reference, BUSINESS_COUNTS);
    await Promise.all([reference.stop(), stub.stop()]);
    return;
  }

  const runs: Run[] = [];
  const logs: Record<string, string> = { stub: stub.logFile, reference: reference.logFile };
  for (const auth of AUTH_MODES) {
    const systems = await startSystems(stub, auth);
    for (const system of systems) logs[`${system.name}, auth ${auth}`] = system.logFile;
    const headers: Record<string, string> =
      auth === 'on' ? { authorization: `Bearer ${await benchToken()}` } : {};
    const all = SYSTEMS.includes('reference') ? [...systems, reference] : systems;
    // The reference checks no token: it gets none.
    const headersOf = (target: Started) => (target === reference ? {} : headers);
    // The reference serves both auth modes: warmed up once, with the first.
    const fresh = auth === AUTH_MODES[0] ? all : systems;
    await startWarmUp(fresh, [...all, reference], auth, headersOf);
    for (const connections of CONNECTION_COUNTS) {
      const cells: Cell[] = [];
      for (const scenario of CHOSEN_SCENARIOS) {
        const tag = `${scenario.id}${auth === 'on' ? 'A' : 'N'}C${connections}`;
        const referenceUrl = `http://127.0.0.1:${reference.port}${scenario.referencePath}`;
        const urlOf = (target: Started) =>
          target === reference ? referenceUrl : `http://127.0.0.1:${target.port}/graphql`;
        const cell: Cell = {
          id: scenario.id,
          title: scenario.title,
          expectedCalls: scenario.expectedCalls,
          systems: {},
          warnings: [],
        };
        const bodies = new Map(
          all.map((target) => [target, scenario.body(`${tag}${target.name}`)]),
        );
        for (const target of all) {
          if (target !== reference) {
            await checkEquivalent(
              scenario,
              target.name,
              urlOf(target),
              referenceUrl,
              scenario.check(`${tag}${target.name}`),
              headers,
            );
          }
        }
        const others = (target: Started) => [...all, reference].filter((other) => other !== target);
        const measured = new Map<Started, TargetResult[]>(all.map((target) => [target, []]));
        for (let round = 0; round < ROUNDS; round++) {
          // Round 0 in the listed order, each later one starting one system further on.
          for (let i = 0; i < all.length; i++) {
            const target = all[(i + round) % all.length] as Started;
            const body = bodies.get(target) as GraphQLBody | (() => GraphQLBody);
            const result = await measure(
              target,
              others(target),
              urlOf(target),
              stub,
              body,
              headersOf(target),
              connections,
              {
                // The cell's warm-up before a system's first round; a short one before the others.
                warmupS: round === 0 ? WARMUP_S : ROUND_WARMUP_S,
                durationS: DURATION_S / ROUNDS,
              },
            );
            measured.get(target)?.push(result);
          }
        }
        for (const target of all) {
          const result = ofRounds(measured.get(target) ?? []);
          cell.systems[target.name] = result;
          console.log(
            `auth ${auth}, ${connections} conn., ${scenario.id}: ${target.name} ${fmt(result.rps, 0)} req/s (rounds ${result.roundsRps?.join(', ')}), p99 ${fmt(result.p99Ms, 1)} ms (rounds ${result.roundsP99Ms?.join(', ')}; slowest ${result.roundsMaxMs?.join(', ')}), ${fmt(result.maxRssMB, 0)} MB, ${fmt(result.upstreamCallsPerRequest, 2)} calls/req, others on core 0 ${Math.round((result.othersCpu ?? 0) * 100)} %, ${result.errorAnswers} error answers`,
          );
        }
        cell.warnings = warningsOf(cell);
        cells.push(cell);
      }
      runs.push({ auth, connections, cells });
    }
    await Promise.all(systems.map((system) => system.stop()));
  }
  await Promise.all([reference.stop(), stub.stop()]);

  const cpuModel = cpus()[0]?.model ?? 'unknown';
  const targets = targetsOf(runs);
  const output = {
    finishedAt: new Date().toISOString(),
    machine: { cores: cpus().length, cpu: cpuModel, harnessNode: process.version },
    settings: {
      durationS: DURATION_S,
      warmupS: WARMUP_S,
      startWarmupS: START_WARMUP_S,
      rounds: ROUNDS,
      connections: CONNECTION_COUNTS,
      auth: AUTH_MODES,
      scenarios: SCENARIO_IDS,
      systems: SYSTEMS,
      stubLatencyMs: LATENCY_MS,
      systemsNode: NODE_VERSION,
      taskset: HAS_TASKSET,
      loadGeneratorPinned: pinned,
      nodeFlags: NODE_FLAGS,
      gateway:
        'NODE_ENV=production (auth off: development, as production refuses AUTH_DISABLED), LOG_LEVEL=info, metrics on, RATE_LIMIT_RPS=0, SERVICE_RATE_LIMIT_RPS=0, no OTEL endpoint (tracing off), GraphiQL and introspection off',
      logs,
    },
    runs: runs.map((run) => ({
      ...run,
      cells: run.cells.map((cell) => ({
        ...cell,
        ratios: Object.fromEntries(
          Object.entries(cell.systems).map(([name, t]) => [
            name,
            {
              toLimit: round(ratio(t, cell.systems.reference), 3),
              gatewayOverSystem: round(ratio(cell.systems.gateway, t), 3),
            },
          ]),
        ),
      })),
    })),
    targets,
  };
  mkdirSync(`${ROOT}bench/results`, { recursive: true });
  writeFileSync(`${ROOT}bench/results/latest.json`, `${JSON.stringify(output, null, 2)}\n`);

  console.log(
    `\n### Benchmark (${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpuModel}, systems on Node ${NODE_VERSION}, ${DURATION_S} s per cell in ${ROUNDS} rounds after ${WARMUP_S} s warm-up, ${START_WARMUP_S} s of each scenario after each start, stub latency ${LATENCY_MS} ms)\n`,
  );
  console.log(`${headline(runs)}\n`);
  for (const run of runs) console.log(`${detail(run)}\n`);
  if (targets.length > 0) {
    console.log(`#### Targets against ${MAIN_PEER}\n\n${targetTable(targets)}\n`);
  }
  console.log('Written to bench/results/latest.json');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  stopAllNow();
  process.exit(1);
});
