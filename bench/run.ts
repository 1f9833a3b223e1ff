/**
 * `npm run bench`: the gateway against a bare reference server (bench/reference.ts) on the same
 * core, over the same fast upstream stub (bench/upstream-stub.ts), scenario by scenario, with
 * authentication off and then on. Writes bench/results/latest.json and prints markdown tables.
 *
 * Layout on a 2-core machine: the gateway and the reference on core 0 (one at a time under
 * load), the stub and this load generator on core 1 (taskset; unpinned when taskset is missing,
 * which the output says).
 *
 * Settings (argv wins over environment):
 *   --duration S     BENCH_DURATION_S      measured seconds per run (default 10)
 *   --warmup S       BENCH_WARMUP_S        warm-up seconds before each run (default 2)
 *   --connections N  BENCH_CONNECTIONS     concurrent connections (default 50)
 *   --latency MS     BENCH_UPSTREAM_LATENCY_MS  fixed stub latency (default 0)
 *   --scenarios S1,S2,S3,S4   --auth off,on
 *   --profile        instead of the table: profile the gateway (node --cpu-prof) in the chosen
 *                    scenarios (default S1,S2), auth off, and print the top functions.
 *   --allocations    instead of the table: bytes allocated per request by the gateway and each
 *                    peer (V8's sampling heap profiler, bench/alloc-probe.ts) over a fixed number
 *                    of requests per scenario, auth on by default. Unlike req/s, this does not
 *                    move with the machine's load, so it can compare changes on a noisy machine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import {
  cpuSeconds,
  GATEWAY_PORT,
  gatewayEnv,
  HAS_TASKSET,
  JSON_PORT,
  type LoadResult,
  load,
  pinSelf,
  post,
  ROOT,
  resetStub,
  round,
  type Started,
  sampleRss,
  settleStub,
  sleep,
  startNode,
  stopAllNow,
} from './lib.ts';
import {
  renderAllocations,
  renderSummary,
  summarise,
  summariseAllocations,
} from './profile-summary.ts';
import {
  BENCH_JWT_SECRET,
  type GraphQLBody,
  kycUserBody,
  transactionBody,
  transactionsBody,
} from './queries.ts';

const { values: argv } = parseArgs({
  options: {
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    latency: { type: 'string' },
    scenarios: { type: 'string' },
    auth: { type: 'string' },
    profile: { type: 'boolean', default: false },
    allocations: { type: 'boolean', default: false },
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

const DURATION_S = setting(argv.duration, 'BENCH_DURATION_S', 10);
const WARMUP_S = setting(argv.warmup, 'BENCH_WARMUP_S', 2);
const CONNECTIONS = setting(argv.connections, 'BENCH_CONNECTIONS', 50);
const LATENCY_MS = setting(argv.latency, 'BENCH_UPSTREAM_LATENCY_MS', 0);
/**
 * Node flags added to every system under test (gateway, peers, reference), e.g.
 * `BENCH_NODE_FLAGS=--no-allocation-site-pretenuring` to give the peers what the gateway sets
 * for itself, or a heap size to compare memory at the same settings.
 */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const PROFILE = argv.profile === true;
const ALLOCATIONS = argv.allocations === true;
const SCENARIO_IDS = (argv.scenarios ?? (PROFILE ? 'S1,S2' : 'S1,S2,S3,S4')).split(',');
const AUTH_MODES = (argv.auth ?? (PROFILE ? 'off' : ALLOCATIONS ? 'on' : 'off,on')).split(',') as (
  | 'off'
  | 'on'
)[];
/** The peers a user would pick instead (bench/peers/), measured beside the gateway. */
const PEERS = ['mercurius', 'apollo'].filter((peer) =>
  (argv.systems ?? 'gateway,reference,mercurius,apollo').split(',').includes(peer),
);

/** The issue's targets (auth off; with auth on, within 10 %). */
const RATIO_TARGETS: Record<string, number> = { S1: 0.6, S2: 0.35, S3: 0.7, S4: 0.75 };
const RSS_LIMIT_BYTES = 150 * 1024 * 1024;
const AUTH_ON_SLACK = 0.1;

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

const SCENARIOS: Scenario[] = [
  {
    id: 'S1',
    title: '`transaction`, a new txRef per request (cache miss, 1 upstream call)',
    expectedCalls: 1,
    body: (tag) => () => transactionBody(`NT-GEN${tag}${next()}`),
    check: (tag) => transactionBody(`NT-GENCHECK${tag}`),
    referencePath: '/graphql',
  },
  {
    id: 'S2',
    title: '`transaction`, the same final txRef every time (cache hit)',
    expectedCalls: 0,
    body: (tag) => transactionBody(`NT-GENHOT${tag}`),
    check: (tag) => transactionBody(`NT-GENHOT${tag}`),
    referencePath: '/graphql/precomputed',
  },
  {
    id: 'S3',
    title: '`transactions` with 20 new txRefs per request (20 upstream calls)',
    expectedCalls: 20,
    body: (tag) => () => {
      const n = next();
      return transactionsBody(Array.from({ length: 20 }, (_, i) => `NT-GEN${tag}${n}x${i}`));
    },
    check: (tag) =>
      transactionsBody(Array.from({ length: 20 }, (_, i) => `NT-GENCHECK${tag}x${i}`)),
    referencePath: '/graphql',
  },
  {
    id: 'S4',
    title: '`kycUser`, 3 levels × 3 checks, a new user per request (1 upstream call)',
    expectedCalls: 1,
    body: (tag) => () => kycUserBody(`usr_bench_${tag}${next()}`),
    check: (tag) => kycUserBody(`usr_check_${tag}`),
    referencePath: '/graphql',
  },
];

interface TargetResult extends LoadResult {
  upstreamCallsPerRequest: number;
  maxRssMB: number;
  /** CPU of the process under test, as a share of one core. */
  cpu: number;
  stubCpu: number;
}

interface ScenarioResult {
  id: string;
  title: string;
  gateway: TargetResult;
  reference: TargetResult;
  /** The peers' results, by name. */
  peers: Record<string, TargetResult>;
  ratio: number;
  p99BoundMs: number;
  targets: {
    ratio: { target: number; met: boolean };
    p99: { boundMs: number; met: boolean };
    rss: { limitMB: number; met: boolean };
  };
  warnings: string[];
}

/**
 * Warm-up, then a timed run against `target`. `idle` (the other process on core 0) is paused
 * meanwhile, so that its leftover work (a major GC after its own run, say) cannot steal the core.
 */
async function measure(
  target: Started,
  idle: Started[],
  url: string,
  stub: Started,
  body: GraphQLBody | (() => GraphQLBody),
  headers: Record<string, string>,
): Promise<TargetResult> {
  for (const other of idle) other.pause();
  try {
    return await timed(target, url, stub, body, headers);
  } finally {
    for (const other of idle) other.resume();
  }
}

async function timed(
  target: Started,
  url: string,
  stub: Started,
  body: GraphQLBody | (() => GraphQLBody),
  headers: Record<string, string>,
): Promise<TargetResult> {
  if (WARMUP_S > 0) {
    await load({ url, connections: CONNECTIONS, durationS: WARMUP_S, headers, body });
  }
  await settleStub(stub.port);
  await resetStub(stub.port);
  const cpu0 = cpuSeconds(target.pid);
  const stubCpu0 = cpuSeconds(stub.pid);
  const t0 = performance.now();
  const rss = sampleRss(target.pid);
  const result = await load({
    url,
    connections: CONNECTIONS,
    durationS: DURATION_S,
    headers,
    body,
  });
  const maxRss = rss.stop();
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = (cpuSeconds(target.pid) - cpu0) / elapsed;
  const stubCpu = (cpuSeconds(stub.pid) - stubCpu0) / elapsed;
  const stats = await settleStub(stub.port);
  return {
    ...result,
    // Per request sent: requests cut off at the end still made their upstream calls.
    upstreamCallsPerRequest: (stats.payment + stats.kyc) / Math.max(1, result.sent),
    maxRssMB: maxRss / 1024 / 1024,
    cpu,
    stubCpu,
  };
}

/** One request to both; the gateway's data must deep-equal the reference's. */
async function checkEquivalent(
  scenario: Scenario,
  gatewayUrl: string,
  referenceUrl: string,
  body: GraphQLBody,
  headers: Record<string, string>,
): Promise<void> {
  const [fromGateway, fromReference] = await Promise.all([
    post(gatewayUrl, body, headers),
    post(referenceUrl, body, headers),
  ]);
  if (fromGateway.errors !== undefined || !isDeepStrictEqual(fromGateway, fromReference)) {
    throw new Error(
      `${scenario.id}: the gateway's answer differs from the reference's.\n` +
        `gateway:   ${JSON.stringify(fromGateway)}\nreference: ${JSON.stringify(fromReference)}`,
    );
  }
  // A null record would mean the stub did not answer: no equivalent work would be measured.
  const records = Object.values((fromGateway.data ?? {}) as Record<string, unknown>).flat();
  if (records.length === 0 || records.some((record) => record === null)) {
    throw new Error(`${scenario.id}: the check answered no record: ${JSON.stringify(fromGateway)}`);
  }
}

function fmt(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function evaluate(
  scenario: Scenario,
  auth: 'off' | 'on',
  gateway: TargetResult,
  reference: TargetResult,
): ScenarioResult {
  const slack = auth === 'on' ? 1 - AUTH_ON_SLACK : 1;
  const ratio = gateway.rps / reference.rps;
  const ratioTarget = (RATIO_TARGETS[scenario.id] ?? 0) * slack;
  const p99Bound = (2 * reference.p99Ms + 2) * (auth === 'on' ? 1 + AUTH_ON_SLACK : 1);
  const warnings: string[] = [];
  for (const [name, r] of [
    ['gateway', gateway],
    ['reference', reference],
  ] as const) {
    if (r.non2xx > 0 || r.errors > 0) {
      warnings.push(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    }
    const core1 = r.stubCpu + r.loadgenCpu;
    if (core1 > 0.9) {
      warnings.push(
        `${name}: core 1 was busy ${Math.round(core1 * 100)} % (stub ${Math.round(r.stubCpu * 100)} % + load generator ${Math.round(r.loadgenCpu * 100)} %), so this figure may be bounded by the load side`,
      );
    }
    if (r.cpu < 0.85) {
      warnings.push(`${name}: used only ${Math.round(r.cpu * 100)} % of its core`);
    }
    if (Math.abs(r.upstreamCallsPerRequest - scenario.expectedCalls) > 0.05) {
      warnings.push(
        `${name}: ${fmt(r.upstreamCallsPerRequest, 3)} upstream calls per request, expected ${scenario.expectedCalls}`,
      );
    }
  }
  return {
    id: scenario.id,
    title: scenario.title,
    gateway,
    reference,
    peers: {},
    ratio,
    p99BoundMs: p99Bound,
    targets: {
      ratio: { target: ratioTarget, met: ratio >= ratioTarget },
      p99: { boundMs: p99Bound, met: gateway.p99Ms <= p99Bound },
      rss: {
        limitMB: RSS_LIMIT_BYTES / 1024 / 1024,
        met: gateway.maxRssMB * 1024 * 1024 < RSS_LIMIT_BYTES,
      },
    },
    warnings,
  };
}

function table(auth: 'off' | 'on', results: ScenarioResult[]): string {
  const yes = (met: boolean) => (met ? 'yes' : '**no**');
  const lines = [
    `#### Authentication ${auth}${auth === 'on' ? ' (HS256 bearer token on every request; targets relaxed by 10 %)' : ''}`,
    '',
    '| Scenario | Gateway req/s | Reference req/s | Ratio (target) | Gateway p50 / p99 ms | Reference p50 / p99 ms | p99 bound ms | Upstream calls/req (gw / ref) | Gateway max RSS MB | Ratio met | p99 met | RSS met |',
    '| --- | -: | -: | -: | -: | -: | -: | -: | -: | :-: | :-: | :-: |',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.id} | ${fmt(r.gateway.rps, 0)} | ${fmt(r.reference.rps, 0)} | ${fmt(r.ratio)} (≥ ${fmt(r.targets.ratio.target)}) | ${fmt(r.gateway.p50Ms)} / ${fmt(r.gateway.p99Ms)} | ${fmt(r.reference.p50Ms)} / ${fmt(r.reference.p99Ms)} | ${fmt(r.p99BoundMs)} | ${fmt(r.gateway.upstreamCallsPerRequest, 2)} / ${fmt(r.reference.upstreamCallsPerRequest, 2)} | ${fmt(r.gateway.maxRssMB, 0)} | ${yes(r.targets.ratio.met)} | ${yes(r.targets.p99.met)} | ${yes(r.targets.rss.met)} |`,
    );
  }
  const warnings = results.flatMap((r) => r.warnings.map((w) => `- ${r.id} ${w}`));
  if (warnings.length > 0) lines.push('', 'Notes:', ...warnings);
  return lines.join('\n');
}

/** The gateway beside its peers: req/s, p99, upstream calls per request, and the ratios. */
function peerTable(auth: 'off' | 'on', results: ScenarioResult[]): string {
  const lines = [
    `#### Peers, authentication ${auth}`,
    '',
    '| Scenario | System | req/s | p99 ms | Upstream calls/req | Ratio to reference | Gateway ÷ system (req/s) |',
    '| --- | --- | -: | -: | -: | -: | -: |',
  ];
  for (const r of results) {
    const systems: Array<[string, TargetResult]> = [
      ['gateway', r.gateway],
      ...Object.entries(r.peers),
      ['reference', r.reference],
    ];
    for (const [name, t] of systems) {
      lines.push(
        `| ${r.id} | ${name} | ${fmt(t.rps, 0)} | ${fmt(t.p99Ms)} | ${fmt(t.upstreamCallsPerRequest, 2)} | ${fmt(t.rps / r.reference.rps)} | ${fmt(r.gateway.rps / t.rps)} |`,
      );
    }
  }
  return lines.join('\n');
}

/** Installs the peers' own dependencies once (bench/peers has its own package.json). */
function setupPeers(): void {
  if (PEERS.length === 0 || existsSync(`${ROOT}bench/peers/node_modules`)) return;
  console.log('bench: installing the peers (npm ci in bench/peers)');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefix', `${ROOT}bench/peers`], {
    stdio: 'inherit',
  });
}

/** Node flags and environment added to a system's own (for the profilers). */
interface Extra {
  nodeFlags?: string[];
  env?: Record<string, string>;
}

/** Starts one peer on core 0 against the stub, with the run's authentication. */
function startPeer(
  name: string,
  stub: Started,
  auth: 'off' | 'on',
  extra: Extra = {},
): Promise<Started> {
  return startNode({
    name,
    script: `bench/peers/${name}.ts`,
    core: 0,
    nodeFlags: [...NODE_FLAGS, ...(extra.nodeFlags ?? [])],
    env: {
      UPSTREAM_URL: `http://127.0.0.1:${stub.port}`,
      NODE_ENV: 'production',
      ...(auth === 'on' && { AUTH_JWT_SECRET: BENCH_JWT_SECRET }),
      ...extra.env,
    },
    portPattern: JSON_PORT,
  });
}

async function token(): Promise<string> {
  return new SignJWT({ scope: 'transactions:read kyc:read' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('bench-merchant')
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(BENCH_JWT_SECRET));
}

function startGateway(stub: Started, auth: 'off' | 'on', extra: Extra = {}) {
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
  for (const scenario of SCENARIOS.filter((s) => SCENARIO_IDS.includes(s.id))) {
    const name = `gateway-${scenario.id}.cpuprofile`;
    const gateway = await startGateway(stub, 'off', {
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
      gatewayUrl,
      referenceBase + scenario.referencePath,
      scenario.check(tag),
      {},
    );
    const result = await measure(gateway, [reference], gatewayUrl, stub, scenario.body(tag), {});
    await gateway.stop();
    console.log(
      `${scenario.id} under the profiler: ${fmt(result.rps, 0)} req/s, p99 ${fmt(result.p99Ms)} ms`,
    );
    report.push(
      renderSummary(
        `${scenario.id} — ${scenario.title} (${fmt(result.rps, 0)} req/s under the profiler)`,
        summarise(`${dir}/${name}`, 20),
      ),
    );
  }
  const text = report.join('\n');
  writeFileSync(`${ROOT}bench/results/profile-summary.md`, `${text}\n`);
  console.log(`\n${text}`);
  console.log(`Profiles and this summary are under ${dir}/ and bench/results/profile-summary.md`);
}

/** Requests per scenario in an allocation run: each sampled run has exactly this many. */
const ALLOCATION_REQUESTS: Record<string, number> = { S1: 3000, S2: 6000, S3: 300, S4: 3000 };

/** Sends SIGUSR2 to a process preloading bench/alloc-probe.ts and waits for its `line`. */
async function signalProbe(target: Started, line: string): Promise<void> {
  const seen = target.output().split(line).length;
  process.kill(target.pid, 'SIGUSR2');
  const until = Date.now() + 60_000;
  while (target.output().split(line).length === seen) {
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
  const scenarios = SCENARIOS.filter((s) => SCENARIO_IDS.includes(s.id));
  const report: string[] = [];
  const table = [
    '| Auth | Scenario | System | KB allocated per request | Gateway ÷ system |',
    '| --- | --- | --- | -: | -: |',
  ];
  for (const auth of AUTH_MODES) {
    const headers: Record<string, string> =
      auth === 'on' ? { authorization: `Bearer ${await token()}` } : {};
    const perSystem = new Map<string, Map<string, number>>();
    for (const name of ['gateway', ...PEERS]) {
      const extra = (id: string) => ({
        nodeFlags: ['--import', './bench/alloc-probe.ts'],
        env: { ALLOC_PROBE_FILE: `${dir}/${name}-${id}-auth-${auth}.heapprofile` },
      });
      const bytes = new Map<string, number>();
      for (const scenario of scenarios) {
        // A process per scenario: the probe writes one file per process.
        const target =
          name === 'gateway'
            ? await startGateway(stub, auth, extra(scenario.id))
            : await startPeer(name, stub, auth, extra(scenario.id));
        const url = `http://127.0.0.1:${target.port}/graphql`;
        const tag = `${scenario.id}${auth === 'on' ? 'A' : 'N'}M${name}`;
        const body = scenario.body(tag);
        await load({
          url,
          connections: CONNECTIONS,
          durationS: Math.max(1, WARMUP_S),
          headers,
          body,
        });
        await signalProbe(target, 'ALLOC_PROBE started');
        const amount = ALLOCATION_REQUESTS[scenario.id] ?? 1000;
        const result = await load({
          url,
          connections: CONNECTIONS,
          durationS: 0,
          amount,
          headers,
          body,
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
    for (const scenario of scenarios) {
      const gateway = perSystem.get('gateway')?.get(scenario.id) ?? Number.NaN;
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

async function main(): Promise<void> {
  setupPeers();
  const pinned = pinSelf(1);
  const layout = HAS_TASKSET
    ? `gateway and reference pinned to core 0, stub to core 1, load generator ${pinned ? 'pinned to core 1' : 'NOT pinned (taskset -p refused)'}`
    : 'taskset not found: every process runs unpinned, so the figures are noisier';
  console.log(
    `bench: ${DURATION_S} s per run after ${WARMUP_S} s warm-up, ${CONNECTIONS} connections, stub latency ${LATENCY_MS} ms; ${layout}${NODE_FLAGS.length > 0 ? `; node flags for every system: ${NODE_FLAGS.join(' ')}` : ''}`,
  );

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

  const runs: { auth: 'off' | 'on'; scenarios: ScenarioResult[] }[] = [];
  for (const auth of AUTH_MODES) {
    const gateway = await startGateway(stub, auth);
    const peers = await Promise.all(PEERS.map((peer) => startPeer(peer, stub, auth)));
    const headers: Record<string, string> =
      auth === 'on' ? { authorization: `Bearer ${await token()}` } : {};
    const gatewayUrl = `http://127.0.0.1:${gateway.port}/graphql`;
    const results: ScenarioResult[] = [];
    for (const scenario of SCENARIOS.filter((s) => SCENARIO_IDS.includes(s.id))) {
      const tag = `${scenario.id}${auth === 'on' ? 'A' : 'N'}`;
      const referenceUrl = `http://127.0.0.1:${reference.port}${scenario.referencePath}`;
      await checkEquivalent(scenario, gatewayUrl, referenceUrl, scenario.check(tag), headers);
      const others = (target: Started) =>
        [gateway, reference, ...peers].filter((process) => process !== target);
      const g = await measure(
        gateway,
        others(gateway),
        gatewayUrl,
        stub,
        scenario.body(`${tag}G`),
        headers,
      );
      const r = await measure(
        reference,
        others(reference),
        referenceUrl,
        stub,
        scenario.body(`${tag}R`),
        headers,
      );
      const result = evaluate(scenario, auth, g, r);
      for (const peer of peers) {
        const peerUrl = `http://127.0.0.1:${peer.port}/graphql`;
        await checkEquivalent(scenario, gatewayUrl, peerUrl, scenario.check(tag), headers);
        result.peers[peer.name] = await measure(
          peer,
          others(peer),
          peerUrl,
          stub,
          scenario.body(`${tag}${peer.name}`),
          headers,
        );
        const p = result.peers[peer.name] as TargetResult;
        console.log(
          `auth ${auth} ${scenario.id}: ${peer.name} ${fmt(p.rps, 0)} req/s (p99 ${fmt(p.p99Ms)} ms, ${fmt(p.upstreamCallsPerRequest, 2)} calls/req): gateway ÷ ${peer.name} ${fmt(g.rps / p.rps)}`,
        );
      }
      results.push(result);
      console.log(
        `auth ${auth} ${scenario.id}: gateway ${fmt(g.rps, 0)} req/s (p99 ${fmt(g.p99Ms)} ms, ${fmt(g.maxRssMB, 0)} MB), reference ${fmt(r.rps, 0)} req/s (p99 ${fmt(r.p99Ms)} ms): ratio ${fmt(result.ratio)}`,
      );
    }
    runs.push({ auth, scenarios: results });
    await Promise.all([gateway.stop(), ...peers.map((peer) => peer.stop())]);
  }
  await Promise.all([reference.stop(), stub.stop()]);

  const cpuModel = cpus()[0]?.model ?? 'unknown';
  const output = {
    finishedAt: new Date().toISOString(),
    machine: { cores: cpus().length, cpu: cpuModel, node: process.version },
    settings: {
      durationS: DURATION_S,
      warmupS: WARMUP_S,
      connections: CONNECTIONS,
      stubLatencyMs: LATENCY_MS,
      taskset: HAS_TASKSET,
      loadGeneratorPinned: pinned,
      nodeFlags: NODE_FLAGS,
    },
    runs: runs.map((run) => ({
      auth: run.auth,
      scenarios: run.scenarios.map((s) => ({
        ...s,
        ratio: round(s.ratio, 3),
        p99BoundMs: round(s.p99BoundMs, 3),
      })),
    })),
  };
  mkdirSync(`${ROOT}bench/results`, { recursive: true });
  writeFileSync(`${ROOT}bench/results/latest.json`, `${JSON.stringify(output, null, 2)}\n`);

  console.log(
    `\n### Benchmark (${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpuModel}, Node ${process.version}, ${DURATION_S} s per run, ${CONNECTIONS} connections, stub latency ${LATENCY_MS} ms)\n`,
  );
  for (const run of runs) console.log(`${table(run.auth, run.scenarios)}\n`);
  if (PEERS.length > 0) {
    for (const run of runs) console.log(`${peerTable(run.auth, run.scenarios)}\n`);
  }
  console.log('Written to bench/results/latest.json');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  stopAllNow();
  process.exit(1);
});
