/**
 * A real redis-server for the scale-out tests: started by the test on a free loopback port,
 * without persistence (`--save '' --appendonly no`) unless asked for (an append-only file in a
 * directory the test gives), stopped by its PID. Without redis-server
 * the tests are skipped with a warning on a developer's machine, and fail in CI (CI=true),
 * where .ci/run installs it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createClient, createCluster } from '@redis/client';
import {
  type Fixture,
  kycByRef,
  type SettlingPayment,
  startFixture,
  startSettlingPayment,
} from './fixture.ts';
import { scaled } from './timeouts.ts';

/** redis-server on the PATH, else Debian's place for it; undefined when absent. */
function findRedisServer(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  return dirs.map((dir) => join(dir, 'redis-server')).find((path) => existsSync(path));
}

export const REDIS_SERVER = findRedisServer();
const inCi = process.env.CI === 'true';

/** True when the Redis tests must be skipped (no redis-server, and not in CI); says so once. */
export function skipRedisTests(suite: string): boolean {
  if (REDIS_SERVER || inCi) return false;
  console.warn(
    `[${suite}] SKIPPED: redis-server is absent, so the Redis tests did not run. ` +
      'Install it with `apt-get install -y redis-server` (CI installs it, and fails without it).',
  );
  return true;
}

/** A free TCP port on 127.0.0.1 (the OS picks one; it is released before use). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

export interface TestRedis {
  port: number;
  url: string;
  /** PID of the running server (changes after `start`). */
  pid(): number | undefined;
  /** Stops the server by its PID and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Sends a signal by PID without waiting (SIGSTOP/SIGCONT: a server that hangs, then wakes). */
  signal(signal: NodeJS.Signals): void;
  /** Runs one command with a short-lived client (inspection from the test). */
  command(args: string[]): Promise<unknown>;
}

async function waitForPong(url: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      await command(url, ['PING']);
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** One command on a connection of its own (`tls`: the CA a TLS-only server is trusted by). */
export async function command(url: string, args: string[], tls?: { ca: Buffer }): Promise<unknown> {
  const client = createClient({
    url,
    socket: tls
      ? { tls: true, ca: tls.ca, connectTimeout: 1000, reconnectStrategy: false }
      : { connectTimeout: 1000, reconnectStrategy: false },
  });
  client.on('error', () => {});
  await client.connect();
  try {
    return await client.sendCommand(args);
  } finally {
    client.destroy();
  }
}

/** How redis-server keeps its data. */
export interface RedisOptions {
  /**
   * Persistence in this directory: an append-only file written and fsynced before each write is
   * answered (`--appendonly yes --appendfsync always`), so a restart, even after SIGKILL, keeps
   * every acknowledged write.
   */
  persistDir?: string;
  /** Added to redis-server's command line (e.g. `--maxmemory`). */
  extraArgs?: string[];
}

/** Starts redis-server on a free loopback port. */
export async function startRedis(options: RedisOptions = {}): Promise<TestRedis> {
  if (!REDIS_SERVER) {
    throw new Error('CI=true but redis-server is absent: .ci/run installs it (apt-get).');
  }
  const binary = REDIS_SERVER;
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const persistence = options.persistDir
      ? ['--dir', options.persistDir, '--appendonly', 'yes', '--appendfsync', 'always']
      : ['--appendonly', 'no'];
    child = spawn(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        ...persistence,
        ...(options.extraArgs ?? []),
      ],
      { stdio: 'ignore' },
    );
    await waitForPong(url, scaled(5000));
  };
  await start();
  return {
    port,
    url,
    pid: () => child?.pid,
    stop: async (signal = 'SIGTERM') => {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill(signal);
      await exited;
    },
    start,
    signal: (signal) => {
      if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid, signal);
    },
    command: (args) => command(url, args),
  };
}

/** A real redis-server and the two upstreams that the scale-out tests put gateways in front of. */
export interface RedisBench {
  redis: TestRedis;
  /** Payments that settle at their `settleAt` time (`unlistedSettleAt` for the others). */
  payment: SettlingPayment;
  kyc: Fixture;
  upstreams: { paymentUrl: string; kycUrl: string };
  /** Stops the upstreams and redis-server (the gateways are the caller's). */
  close: () => Promise<void>;
}

/** Starts redis-server, a settling payment upstream and a KYC upstream. */
export async function startRedisBench(
  unlistedSettleAt: number,
  redisArgs: string[] = [],
): Promise<RedisBench> {
  const redis = await startRedis({ extraArgs: redisArgs });
  const payment = await startSettlingPayment(unlistedSettleAt);
  const kyc = await startFixture(kycByRef);
  return {
    redis,
    payment,
    kyc,
    upstreams: { paymentUrl: payment.fixture.url, kycUrl: kyc.url },
    close: async () => {
      await payment.fixture.close();
      await kyc.close();
      await redis.stop();
    },
  };
}

/** redis-cli beside redis-server (Debian's redis-tools); undefined when absent. */
function findRedisCli(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  return dirs.map((dir) => join(dir, 'redis-cli')).find((path) => existsSync(path));
}

export const REDIS_CLI = findRedisCli();

/** True when the Redis Cluster tests must be skipped (no redis-server or redis-cli, not in CI). */
export function skipRedisClusterTests(suite: string): boolean {
  if ((REDIS_SERVER && REDIS_CLI) || inCi) return false;
  console.warn(
    `[${suite}] SKIPPED: redis-server or redis-cli is absent, so the Redis Cluster tests did not ` +
      'run. Install them with `apt-get install -y redis-server redis-tools` (CI installs them, ' +
      'and fails without them).',
  );
  return true;
}

/** A real 3-master Redis Cluster on loopback, for the cluster runs of the Redis tests. */
export interface TestRedisCluster {
  ports: number[];
  /** `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`: a `CACHE_URL`. */
  url: string;
  /** Runs one command on the master of `args[1]`'s slot (the key), from the test. */
  command(args: string[]): Promise<unknown>;
  /** Stops the three servers by their PIDs and removes their directory. */
  stop(): Promise<void>;
}

/**
 * Starts 3 redis-servers with `--cluster-enabled yes` on free loopback ports (their cluster
 * files in a temporary directory), joins them with `redis-cli --cluster create … --cluster-replicas
 * 0`, and waits until every node reports `cluster_state:ok`.
 */
export async function startRedisCluster(): Promise<TestRedisCluster> {
  if (!REDIS_SERVER || !REDIS_CLI) {
    throw new Error('CI=true but redis-server or redis-cli is absent: .ci/run installs them.');
  }
  const server = REDIS_SERVER;
  const cli = REDIS_CLI;
  const dir = await mkdtemp(join(tmpdir(), 'gw-redis-cluster-'));
  const ports: number[] = [];
  while (ports.length < 3) {
    const port = await freePort();
    // A cluster node also listens on port + 10000 (the cluster bus).
    if (!ports.includes(port) && port + 10_000 <= 65_535) ports.push(port);
  }
  const children = ports.map((port) =>
    spawn(
      server,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '5000',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      { stdio: 'ignore' },
    ),
  );
  const stop = async (): Promise<void> => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(ports.map((port) => waitForPong(`redis://127.0.0.1:${port}`, 10_000)));
    await new Promise<void>((resolve, reject) => {
      const create = spawn(
        cli,
        [
          '--cluster',
          'create',
          ...ports.map((port) => `127.0.0.1:${port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { stdio: 'ignore' },
      );
      create.once('error', reject);
      create.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`redis-cli --cluster create exited ${code}`)),
      );
    });
    const until = Date.now() + 30_000;
    for (const port of ports) {
      for (;;) {
        const info = String(await command(`redis://127.0.0.1:${port}`, ['CLUSTER', 'INFO']));
        if (info.includes('cluster_state:ok')) break;
        if (Date.now() > until) throw new Error(`cluster not ok on ${port}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ports,
    url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
    command: async (args) => {
      const client = createCluster({
        rootNodes: ports.map((port) => ({ socket: { host: '127.0.0.1', port } })),
        defaults: { socket: { connectTimeout: 1000, reconnectStrategy: false } },
      });
      client.on('error', () => {});
      await client.connect();
      try {
        return await client.sendCommand(args[1], false, args);
      } finally {
        client.destroy();
      }
    },
    stop,
  };
}

/** A real redis-server watched by one real Sentinel, for the Sentinel run of the state contract. */
export interface TestRedisSentinel {
  /** `redis+sentinel://127.0.0.1:<sentinel port>/gwmaster`: a `CACHE_URL`. */
  url: string;
  master: TestRedis;
  /** Stops the sentinel and the master by their PIDs, and removes the sentinel's directory. */
  stop(): Promise<void>;
}

/**
 * Starts a redis-server (the master) and `redis-server <conf> --sentinel` monitoring it as
 * `gwmaster` (quorum 1) on free loopback ports; resolves once the sentinel names the master.
 */
export async function startRedisSentinel(): Promise<TestRedisSentinel> {
  if (!REDIS_SERVER) throw new Error('CI=true but redis-server is absent: .ci/run installs it.');
  const master = await startRedis();
  const dir = await mkdtemp(join(tmpdir(), 'gw-redis-sentinel-'));
  const port = await freePort();
  const conf = join(dir, 'sentinel.conf');
  await writeFile(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor gwmaster 127.0.0.1 ${master.port} 1`,
      'sentinel down-after-milliseconds gwmaster 5000',
      '',
    ].join('\n'),
  );
  const child = spawn(REDIS_SERVER, [conf, '--sentinel'], { stdio: 'ignore' });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await master.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const until = Date.now() + 10_000;
    for (;;) {
      const named = await command(`redis://127.0.0.1:${port}`, [
        'SENTINEL',
        'GET-MASTER-ADDR-BY-NAME',
        'gwmaster',
      ]).catch(() => undefined);
      if (Array.isArray(named) && String(named[1]) === String(master.port)) break;
      if (Date.now() > until) throw new Error('the sentinel did not name the master');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis+sentinel://127.0.0.1:${port}/gwmaster`, master, stop };
}
