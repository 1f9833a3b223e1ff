/**
 * `npm run bench:compare -- --base <git ref>`: the gateway of this checkout against the gateway
 * of another commit, in µs of CPU per request, both production processes started together and
 * loaded at once on core 0 (the stub and the load generator on core 1), in rounds, so that
 * whatever the machine's speed does during a round it does to both. Then the same with the two
 * the other way round (which process starts first and is loaded by the first autocannon can
 * favour it by a few per cent): a change is the mean of the two orders' medians.
 *
 * The other commit is checked out into a temporary worktree (this repository's `git worktree`,
 * removed at the end) that uses this checkout's node_modules: compare commits with the same
 * dependencies. `--peer mercurius-prod` (or `apollo`, `mercurius`) instead of `--base`: the
 * gateway against that peer of bench/peers/, started as the tables start it, the same way (a
 * ratio below 1 is the gateway taking less CPU per request than the peer). Settings: `--scenario
 * S1|S3|S4` (default S3), `--rounds N` (10), `--seconds S` (3 per round, after 8 s of warm-up),
 * `--connections N` (16 each), `--auth on|off` (on), `--env NAME=VALUE` (repeatable: a setting
 * given to both gateways, e.g. to compare two commits with another caller share), `--head-env
 * NAME=VALUE` (repeatable: to this checkout's gateway alone, after `--env`: with `--base HEAD`,
 * what one setting costs, such as `CACHE_MAX_ENTRIES=1`, or `BENCH_FEATURES_OFF=single-flight`
 * with `--env NODE_ENV=development` on both, since production refuses it).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  benchToken,
  cpuSeconds,
  GATEWAY_PORT,
  gatewayEnv,
  JSON_PORT,
  load,
  peerEnv,
  pinSelf,
  ROOT,
  type Started,
  setupPeers,
  startNode,
  stopAllNow,
} from './lib.ts';
import {
  BENCH_JWT_SECRET,
  type GraphQLBody,
  type NewRecordScenario,
  newRecordsBody,
} from './queries.ts';

const { values: argv } = parseArgs({
  options: {
    base: { type: 'string' },
    peer: { type: 'string' },
    scenario: { type: 'string', default: 'S3' },
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    auth: { type: 'string', default: 'on' },
    env: { type: 'string', multiple: true, default: [] },
    'head-env': { type: 'string', multiple: true, default: [] },
  },
});
const PEERS = ['mercurius-prod', 'apollo', 'mercurius'];
if ((argv.base === undefined) === (argv.peer === undefined)) {
  console.error(
    'usage: npm run bench:compare -- --base <git ref> | --peer mercurius-prod [--scenario S1|S3|S4] …',
  );
  process.exit(2);
}
if (argv.peer !== undefined && !PEERS.includes(argv.peer)) {
  console.error(`--peer is one of ${PEERS.join(', ')}`);
  process.exit(2);
}
const SCENARIO = argv.scenario as NewRecordScenario;
if (!['S1', 'S3', 'S4'].includes(SCENARIO)) {
  console.error('--scenario is S1, S3 or S4');
  process.exit(2);
}
const ROUNDS = Number(argv.rounds);
const SECONDS = Number(argv.seconds);
const CONNECTIONS = Number(argv.connections);
const AUTH = argv.auth !== 'off';
/** `NAME=VALUE` settings as an environment; exits on one that is not of that form. */
function settingsOf(option: string, settings: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const setting of settings) {
    const at = setting.indexOf('=');
    if (at <= 0) {
      console.error(`--${option} takes NAME=VALUE (got ${setting})`);
      process.exit(2);
    }
    env[setting.slice(0, at)] = setting.slice(at + 1);
  }
  return env;
}
/** Settings given to both gateways (`--env`), and to this checkout's alone (`--head-env`). */
const EXTRA_ENV = settingsOf('env', argv.env);
const HEAD_ENV = settingsOf('head-env', argv['head-env']);
const WARMUP_S = 8;

/** New records on every request (no cache hits), told apart by `tag` between the processes. */
function bodies(tag: string): () => GraphQLBody {
  let n = 0;
  return () => {
    n += 1;
    return newRecordsBody(SCENARIO, `CMP${tag}`, n);
  };
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, stdio: 'pipe' });
const { peer } = argv;
/** The other commit's worktree (none against a peer). */
let base: string | undefined;
if (argv.base !== undefined) {
  base = mkdtempSync(join(tmpdir(), 'bench-compare-'));
  git('worktree', 'add', '--detach', base, argv.base);
  symlinkSync(join(ROOT, 'node_modules'), join(base, 'node_modules'));
} else setupPeers();
/** What the other process is called in what this prints. */
const otherName =
  peer ??
  git('rev-parse', '--short', argv.base ?? 'HEAD')
    .toString()
    .trim();
const headCommit = git('rev-parse', '--short', 'HEAD').toString().trim();
const dirty = git('status', '--porcelain', '--untracked-files=no').toString().trim() !== '';

pinSelf(1);
const stub = await startNode({
  name: 'compare-stub',
  script: 'bench/upstream-stub.ts',
  env: { STUB_PORT: '0' },
  core: 1,
  portPattern: JSON_PORT,
});
const token = await benchToken();
const headers = {
  accept: 'application/graphql-response+json',
  ...(AUTH && { authorization: `Bearer ${token}` }),
};

function gateway(root: string, name: string): Promise<Started> {
  return startNode({
    name,
    script: join(root, 'src/main.ts'),
    env: gatewayEnv(stub.port, {
      ...(AUTH ? { AUTH_JWT_SECRET: BENCH_JWT_SECRET } : { AUTH_DISABLED: 'true' }),
      ...EXTRA_ENV,
      ...(root === ROOT ? HEAD_ENV : {}),
    }),
    core: 0,
    portPattern: GATEWAY_PORT,
    timeoutMs: 30_000,
  });
}

/** One process loaded for `seconds`: µs of CPU per request answered, and its errors. */
async function measure(target: Started, body: () => GraphQLBody, seconds: number) {
  const before = cpuSeconds(target.pid);
  const result = await load({
    url: `http://127.0.0.1:${target.port}/graphql`,
    connections: CONNECTIONS,
    durationS: seconds,
    headers,
    body,
  });
  return {
    cpuUs: ((cpuSeconds(target.pid) - before) * 1e6) / result.requests,
    rps: result.rps,
    errors: result.non2xx + result.errors + result.graphqlErrors + result.timeouts,
  };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** The other process: the base commit's gateway, or the peer. */
function startOther(name: string): Promise<Started> {
  if (base !== undefined) return gateway(base, name);
  return startNode({
    name,
    script: `bench/peers/${peer}.ts`,
    env: peerEnv(stub.port, peer ?? '', AUTH),
    core: 0,
    portPattern: JSON_PORT,
    timeoutMs: 30_000,
  });
}

/** Both processes started together, `first` first; each round's ratio this checkout ÷ the other. */
async function order(first: 'head' | 'other'): Promise<number> {
  let head: Started;
  let other: Started;
  if (first === 'head') {
    head = await gateway(ROOT, 'compare-head');
    other = await startOther('compare-other');
  } else {
    other = await startOther('compare-other');
    head = await gateway(ROOT, 'compare-head');
  }
  const headBody = bodies(`h${first}`);
  const otherBody = bodies(`o${first}`);
  await Promise.all([measure(head, headBody, WARMUP_S), measure(other, otherBody, WARMUP_S)]);
  const ratios: number[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const [h, o] = await Promise.all([
      measure(head, headBody, SECONDS),
      measure(other, otherBody, SECONDS),
    ]);
    ratios.push(h.cpuUs / o.cpuUs);
    console.log(
      `  round ${round}: this checkout ${h.cpuUs.toFixed(0)} µs/request (${h.rps.toFixed(0)} req/s, ${h.errors} errors), ${otherName} ${o.cpuUs.toFixed(0)} µs/request (${o.rps.toFixed(0)} req/s, ${o.errors} errors)`,
    );
  }
  await Promise.all([head.stop(), other.stop()]);
  const result = median(ratios);
  console.log(
    `  ${first === 'head' ? 'this checkout' : otherName} started first: this checkout ÷ ${otherName}, median ${result.toFixed(3)}`,
  );
  return result;
}

try {
  console.log(
    `${SCENARIO}, auth ${AUTH ? 'on' : 'off'}, ${CONNECTIONS} connections each, ${ROUNDS} rounds of ${SECONDS} s: ${headCommit}${dirty ? ' (with uncommitted changes)' : ''} against ${otherName}${argv.env.length > 0 ? `; both gateways with ${argv.env.join(' ')}` : ''}${argv['head-env'].length > 0 ? `; this checkout's with ${argv['head-env'].join(' ')}` : ''}`,
  );
  const headFirst = await order('head');
  const otherFirst = await order('other');
  const mean = (headFirst + otherFirst) / 2;
  console.log(
    `µs of CPU per request, this checkout ÷ ${otherName}: ${mean.toFixed(3)} (${((mean - 1) * 100).toFixed(1)} %; the two orders: ${headFirst.toFixed(3)}, ${otherFirst.toFixed(3)})`,
  );
} finally {
  await stub.stop();
  stopAllNow();
  if (base !== undefined) {
    git('worktree', 'remove', '--force', base);
    rmSync(base, { recursive: true, force: true });
  }
}
