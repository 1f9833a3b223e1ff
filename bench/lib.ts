/**
 * What bench/run.ts and bench/growth.ts share: starting and stopping the processes under test
 * (pinned to a core with taskset when it exists, on Node 24, their standard output and error
 * written straight to a file so that no pipe is read on the load generator's core), reading
 * their memory and CPU from /proc, and driving load with autocannon while keeping every
 * response time (autocannon's own histograms round to whole milliseconds, too coarse here).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import autocannon from 'autocannon';
import { SignJWT } from 'jose';
import type { GraphQLBody } from './queries.ts';
import { BENCH_JWT_SECRET, STUB_CREDENTIALS } from './queries.ts';

export const ROOT = new URL('../', import.meta.url).pathname;
/**
 * The Node every system under test runs on: the project's pinned `node` devDependency (Node 24)
 * when installed, else the Node running the harness.
 */
export const NODE = existsSync(`${ROOT}node_modules/node/bin/node`)
  ? `${ROOT}node_modules/node/bin/node`
  : process.execPath;
export const NODE_VERSION = spawnSync(NODE, ['--version']).stdout?.toString().trim() ?? 'unknown';
/** Where every started process's standard output and error go, one file per process. */
export const LOG_DIR = `${ROOT}bench/results/logs`;

/** Whether `taskset` can be run here. */
export const HAS_TASKSET = spawnSync('taskset', ['--version']).status === 0;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim() || '100');

/** Pins this process (every thread) to `core`; false when taskset is missing or refuses. */
export function pinSelf(core: number): boolean {
  if (!HAS_TASKSET) return false;
  return spawnSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)]).status === 0;
}

export interface Started {
  name: string;
  pid: number;
  port: number;
  /** Everything the process wrote so far (stdout and stderr, read back from its log file). */
  output(): string;
  /** What the process wrote from byte `offset` of its log file on. */
  outputFrom(offset: number): string;
  /** How many bytes the process has written to its log file so far. */
  outputBytes(): number;
  /** The file its stdout and stderr go to. */
  logFile: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
  /**
   * SIGSTOP / SIGCONT. The tables no longer stop the systems that wait their turn; they wait
   * until those are quiet ({@link untilQuiet}).
   */
  pause(): void;
  resume(): void;
}

const running = new Set<ChildProcess>();
/** Ends every process this run started (by PID), e.g. when the run fails half-way. */
export function stopAllNow(): void {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
process.once('exit', stopAllNow);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopAllNow();
    process.exit(130);
  });
}

export interface StartOptions {
  name: string;
  /** Script path relative to the project root. */
  script: string;
  env: Record<string, string>;
  /** Core to pin to with taskset (ignored without taskset). */
  core?: number;
  nodeFlags?: string[];
  /** Finds the listening port in the output. */
  portPattern: RegExp;
  timeoutMs?: number;
}

let started = 0;

/**
 * Removes the log files of earlier runs (those whose harness, the number their name starts
 * with, has ended): a full run writes a few hundred MB of request lines.
 */
function clearOldLogs(): void {
  if (!existsSync(LOG_DIR)) return;
  for (const file of readdirSync(LOG_DIR)) {
    const owner = Number(/^(\d+)-/.exec(file)?.[1]);
    if (owner === process.pid) continue;
    let alive = false;
    try {
      process.kill(owner, 0);
      alive = true;
    } catch (error) {
      // ESRCH: the run that wrote it has ended; EPERM: it runs, as another user
      alive = (error as NodeJS.ErrnoException).code === 'EPERM';
    }
    if (!alive) rmSync(`${LOG_DIR}/${file}`, { force: true });
  }
}

/** Bytes of `file` from `offset` to its end, as text. */
function readFrom(file: string, offset: number): string {
  const fd = openSync(file, 'r');
  try {
    const size = statSync(file).size;
    if (size <= offset) return '';
    const buffer = Buffer.allocUnsafe(size - offset);
    const read = readSync(fd, buffer, 0, buffer.length, offset);
    return buffer.toString('utf8', 0, read);
  } finally {
    closeSync(fd);
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * Starts a Node process (under `taskset -c core` when possible) and waits for its port. Its
 * stdout and stderr are a file under bench/results/logs/ (the child writes it directly; this
 * process only reads it back when asked), so a system that logs a line per request costs the
 * load generator's core nothing.
 */
export async function startNode(options: StartOptions): Promise<Started> {
  const args = [...(options.nodeFlags ?? []), options.script];
  const pinned = HAS_TASKSET && options.core !== undefined;
  if (started === 0) clearOldLogs();
  mkdirSync(LOG_DIR, { recursive: true });
  started += 1;
  const logFile = `${LOG_DIR}/${process.pid}-${String(started).padStart(3, '0')}-${options.name}.log`;
  const fd = openSync(logFile, 'w');
  const spawnOptions = {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['ignore', fd, fd] as ['ignore', number, number],
  };
  const child = pinned
    ? spawn('taskset', ['-c', String(options.core), NODE, ...args], spawnOptions)
    : spawn(NODE, args, spawnOptions);
  closeSync(fd);
  running.add(child);
  child.once('exit', () => running.delete(child));
  const output = () => readFrom(logFile, 0);
  const until = Date.now() + (options.timeoutMs ?? 15_000);
  let port: number | undefined;
  while (port === undefined) {
    const match = options.portPattern.exec(output());
    if (match?.[1]) port = Number(match[1]);
    else if (child.exitCode !== null || Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} did not start; its output (${logFile}):\n${output()}`);
    } else await sleep(20);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.name} has no pid`);
  return {
    name: options.name,
    pid,
    port,
    logFile,
    output,
    outputFrom: (offset) => readFrom(logFile, offset),
    outputBytes: () => fileSize(logFile),
    pause: () => process.kill(pid, 'SIGSTOP'),
    resume: () => process.kill(pid, 'SIGCONT'),
    stop: async (graceMs = 15_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(() => {
        if (child.exitCode === null) process.kill(pid, 'SIGKILL');
      }, graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Memory of a process started with bench/gc-probe.ts preloaded, right after a full GC. */
export interface MemoryProbe {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** Asks a process that preloads bench/gc-probe.ts for its memory after a full GC (SIGUSR2). */
export async function probeMemory(target: Started, timeoutMs = 60_000): Promise<MemoryProbe> {
  const from = target.outputBytes();
  process.kill(target.pid, 'SIGUSR2');
  const until = Date.now() + timeoutMs;
  for (;;) {
    const parts = target.outputFrom(from).split('GC_PROBE ');
    if (parts.length > 1 && parts[parts.length - 1]?.includes('\n')) {
      const line = (parts[parts.length - 1] ?? '').split('\n', 1)[0] ?? '';
      return JSON.parse(line) as MemoryProbe;
    }
    if (Date.now() > until) throw new Error(`${target.name} did not answer the memory probe`);
    await sleep(50);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The resident set size of a process in bytes (0 when it cannot be read). */
export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * The step in which {@link cpuSeconds} moves: Linux reports a process's CPU time in clock ticks
 * (`getconf CLK_TCK`, usually 100 a second).
 */
export const CPU_TICK_S = 1 / CLK_TCK;

/** CPU seconds (user + system) a process has used so far, in steps of {@link CPU_TICK_S}. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** CPU seconds the processes `pids` have used so far together (see {@link cpuSeconds}). */
export function cpuSecondsOfAll(pids: readonly number[]): number {
  return pids.reduce((total, pid) => total + cpuSeconds(pid), 0);
}

/**
 * Waits until the processes `pids` are quiet: together at most one clock tick of CPU (and a half,
 * for a tick that straddles the window's edge) in a window of `windowMs`, for at most `maxMs`;
 * returns their share of a core in the last window. What is left of their own run (a major
 * collection, say) ends before another system is measured, and nothing stops them: no server is
 * stopped in production, and a process stopped with SIGSTOP would count the stopped time in its
 * own clocks (V8's allocation rate, its memory reducer's timer).
 */
export async function untilQuiet(
  pids: readonly number[],
  { windowMs = 500, maxMs = 5_000 }: { windowMs?: number; maxMs?: number } = {},
): Promise<number> {
  const until = Date.now() + maxMs;
  for (;;) {
    const before = cpuSecondsOfAll(pids);
    await sleep(windowMs);
    const spent = cpuSecondsOfAll(pids) - before;
    if (spent <= CPU_TICK_S * 1.5 || Date.now() >= until) return spent / (windowMs / 1000);
  }
}

/** Samples the RSS of a process every 100 ms; `stop()` gives the largest seen. */
export function sampleRss(pid: number): { stop(): number } {
  let max = rssBytes(pid);
  const timer = setInterval(() => {
    max = Math.max(max, rssBytes(pid));
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(max, rssBytes(pid));
    },
  };
}

/** Stub helpers: calls counted since the last reset. */
export async function stubStats(stubPort: number): Promise<{ payment: number; kyc: number }> {
  const response = await fetch(`http://127.0.0.1:${stubPort}/__stats`);
  return (await response.json()) as { payment: number; kyc: number };
}
/**
 * Waits until the stub's counters stop moving (requests still in flight have finished): the
 * same for two polls 200 ms apart, so that a system slowed by a busy core is not taken for done.
 */
export async function settleStub(stubPort: number): Promise<{ payment: number; kyc: number }> {
  let last = await stubStats(stubPort);
  let still = 0;
  const until = Date.now() + 10_000;
  for (;;) {
    await sleep(200);
    const now = await stubStats(stubPort);
    still = now.payment === last.payment && now.kyc === last.kyc ? still + 1 : 0;
    if (still >= 2 || Date.now() > until) return now;
    last = now;
  }
}
export async function resetStub(stubPort: number): Promise<void> {
  await fetch(`http://127.0.0.1:${stubPort}/__stats/reset`, { method: 'POST' });
}

/** The HS256 token of the auth-on runs: a service caller with both read scopes, 2 h. */
export function benchToken(business?: string): Promise<string> {
  return new SignJWT({
    scope: 'transactions:read kyc:read',
    // The gateway's default AUTH_BUSINESS_CLAIM.
    ...(business !== undefined && { biz: business }),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('bench-merchant')
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(BENCH_JWT_SECRET));
}

/** The environment of a gateway process against the stub. */
export function gatewayEnv(
  stubPort: number,
  extra: Record<string, string>,
): Record<string, string> {
  const url = `http://127.0.0.1:${stubPort}`;
  return {
    PAYMENT_API_URL: url,
    PAYMENT_ACCESS_TOKEN: STUB_CREDENTIALS.paymentAccessToken,
    KYC_API_URL: url,
    KYC_SECRET_KEY: STUB_CREDENTIALS.kycSecretKey,
    KYC_PUBLIC_KEY: STUB_CREDENTIALS.kycPublicKey,
    KYC_BUSINESS_SLUG: STUB_CREDENTIALS.kycBusinessSlug,
    KYC_SDK_SCRIPT_URL: `${url}/sdk/kyc.js`,
    RATE_LIMIT_RPS: '0',
    SERVICE_RATE_LIMIT_RPS: '0',
    GRAPHIQL: 'false',
    INTROSPECTION: 'false',
    // Production refuses AUTH_DISABLED: the runs without authentication are production in all
    // but name (GraphiQL and introspection off, as there).
    NODE_ENV: extra.AUTH_DISABLED === 'true' ? 'development' : 'production',
    // Development's guard that freezes every cached record, off as in production.
    CACHE_FREEZE_RECORDS: 'false',
    // Production logs one line per request; BENCH_LOG_LEVEL=warn measures without them.
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    // BENCH_OTEL_ENDPOINT=http://127.0.0.1:<port> measures with traces exported there.
    ...(process.env.BENCH_OTEL_ENDPOINT && {
      OTEL_EXPORTER_OTLP_ENDPOINT: process.env.BENCH_OTEL_ENDPOINT,
    }),
    PORT: '0',
    ...extra,
  };
}

/** The gateway's start lines: plain in development, JSON lines (`… ready in … ms`) in production. */
export const GATEWAY_PORT =
  /serving GraphQL at http:\/\/127\.0\.0\.1:(\d+)\/graphql[\s\S]*[Rr]eady in/;
export const JSON_PORT = /\{"port":(\d+)\}/;

/** Posts one GraphQL body and returns the parsed answer (throws on a non-200). */
export async function post(
  url: string,
  body: GraphQLBody,
  headers: Record<string, string>,
): Promise<{ data?: unknown; errors?: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as { data?: unknown; errors?: unknown };
}

export interface LoadOptions {
  url: string;
  connections: number;
  /** Seconds; ignored when `amount` is set. */
  durationS: number;
  /** Stop after this many requests instead of after a duration. */
  amount?: number;
  headers: Record<string, string>;
  /** Headers of each request on top of `headers` (e.g. a token per business, in turn). */
  headersEach?: () => Record<string, string>;
  /** A fixed body, or a new body for each request. */
  body: GraphQLBody | (() => GraphQLBody);
  /**
   * Requests per second over all connections, sent at that pace whatever the answers' pace
   * (autocannon's `overallRate`); unset: each connection sends its next request as soon as it
   * has the answer to the last.
   */
  rate?: number;
}

export interface LoadResult {
  /** Responses received. */
  requests: number;
  /** Requests sent (includes those still in flight when the run stopped). */
  sent: number;
  durationS: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Answers whose body holds `"errors"` (a GraphQL error, whatever the status). */
  graphqlErrors: number;
  /** CPU this (load generator) process used, as a share of one core. */
  loadgenCpu: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

/** Runs autocannon against `url` and returns throughput and exact latency percentiles. */
export function load(options: LoadOptions): Promise<LoadResult> {
  const headers = { 'content-type': 'application/json', ...options.headers };
  const { body, headersEach } = options;
  const fixed = typeof body === 'function' ? undefined : JSON.stringify(body);
  let times = new Float64Array(1 << 16);
  let count = 0;
  let graphqlErrors = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        method: 'POST',
        connections: options.connections,
        duration: options.durationS,
        ...(options.amount !== undefined && { amount: options.amount }),
        ...(options.rate !== undefined && { overallRate: options.rate }),
        headers,
        ...(fixed !== undefined && { body: fixed }),
        requests: [
          {
            ...((typeof body === 'function' || headersEach) && {
              setupRequest: (request) => ({
                ...request,
                ...(typeof body === 'function' && { body: JSON.stringify(body()) }),
                ...(headersEach && { headers: { ...request.headers, ...headersEach() } }),
              }),
            }),
            // A 200 may still carry errors (GraphQL reports a failed field there).
            onResponse: (_status, text) => {
              if (text.includes('"errors"')) graphqlErrors += 1;
            },
          },
        ],
        timeout: 30,
      },
      (error, result) => {
        if (error) {
          reject(error);
          return;
        }
        const elapsed = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        const sorted = times.subarray(0, count).sort();
        let sum = 0;
        for (const t of sorted) sum += t;
        resolve({
          requests: count,
          sent: result.requests.sent,
          durationS: result.duration,
          rps: count / result.duration,
          p50Ms: percentile(sorted, 50),
          p90Ms: percentile(sorted, 90),
          p99Ms: percentile(sorted, 99),
          maxMs: sorted[sorted.length - 1] ?? Number.NaN,
          meanMs: count === 0 ? Number.NaN : sum / count,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          graphqlErrors,
          loadgenCpu: (cpu.user + cpu.system) / 1e6 / elapsed,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      if (count === times.length) {
        const bigger = new Float64Array(times.length * 2);
        bigger.set(times);
        times = bigger;
      }
      times[count] = responseTime;
      count += 1;
    });
  });
}

export const round = (value: number, digits = 2): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

/** Installs the peers' own dependencies once (bench/peers has its own package.json). */
export function setupPeers(): void {
  const manifest = JSON.parse(readFileSync(`${ROOT}bench/peers/package.json`, 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const missing = Object.entries(manifest.dependencies).filter(([name, version]) => {
    const installed = `${ROOT}bench/peers/node_modules/${name}/package.json`;
    if (!existsSync(installed)) return true;
    return (JSON.parse(readFileSync(installed, 'utf8')) as { version: string }).version !== version;
  });
  if (missing.length === 0) return;
  console.log(
    `bench: installing the peers (npm ci in bench/peers; missing or other versions: ${missing.map(([name]) => name).join(', ')})`,
  );
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefix', `${ROOT}bench/peers`], {
    stdio: 'inherit',
  });
}

/** The environment of a peer (bench/peers/`name`.ts) against the stub. */
export function peerEnv(stubPort: number, name: string, auth: boolean): Record<string, string> {
  return {
    UPSTREAM_URL: `http://127.0.0.1:${stubPort}`,
    NODE_ENV: 'production',
    // The peer's own log (pino, asynchronous destination); stdout is another file.
    PEER_LOG_FILE: `${LOG_DIR}/${process.pid}-${name}-auth-${auth ? 'on' : 'off'}-app.log`,
    ...(auth && { AUTH_JWT_SECRET: BENCH_JWT_SECRET }),
  };
}
