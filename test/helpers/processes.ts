/**
 * Real gateway processes (`node src/main.ts`, as `npm start` runs it) for the multi-process
 * tests: each on a free loopback port, against upstreams the test started, stopped by PID.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createClient as createSseClient } from 'graphql-sse';
import { SignJWT } from 'jose';
import { KYC_PUBLIC, KYC_SECRET, KYC_SLUG, PAYMENT_TOKEN, TEST_JWT_SECRET } from './gateway.ts';
import { metric } from './metrics.ts';
import { scaled } from './timeouts.ts';

export interface GatewayProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** What it printed on stdout alone so far. */
  stdout(): string;
  /** Sends a signal by PID and waits for the exit; resolves to the exit code (null if killed). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** A counter or gauge of its /metrics (summed over label sets matching `labels`). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

const started: GatewayProcess[] = [];

/** Stops (SIGKILL, by PID) every gateway process still running; for afterAll. */
export async function stopAllGateways(): Promise<void> {
  await Promise.all(started.map((gateway) => gateway.stop('SIGKILL')));
  started.length = 0;
}

/** Starts `node src/main.ts` against the given upstreams; resolves once it serves. */
export async function spawnGateway(
  upstreams: { paymentUrl: string; kycUrl: string },
  env: Record<string, string>,
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: '0',
      HOST: '127.0.0.1',
      PAYMENT_API_URL: upstreams.paymentUrl,
      KYC_API_URL: upstreams.kycUrl,
      // With a file of businesses, each business's credentials are in it.
      ...(env.BUSINESSES_FILE === undefined && {
        PAYMENT_ACCESS_TOKEN: PAYMENT_TOKEN,
        KYC_SECRET_KEY: KYC_SECRET,
        KYC_PUBLIC_KEY: KYC_PUBLIC,
        KYC_BUSINESS_SLUG: KYC_SLUG,
      }),
      KYC_SDK_SCRIPT_URL: `${upstreams.kycUrl}/sdk/kyc.js`,
      AUTH_JWT_SECRET: TEST_JWT_SECRET,
      RATE_LIMIT_RPS: '0',
      SERVICE_RATE_LIMIT_RPS: '0',
      GRAPHIQL: 'false',
      LOG_LEVEL: 'warn',
      // Stopped at once unless a test measures the drain (production drains 5 s by default).
      SHUTDOWN_DRAIN_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const until = Date.now() + scaled(15_000);
  let url: string | undefined;
  while (!url) {
    url = /serving GraphQL at (http:\/\/127\.0\.0\.1:\d+)\/graphql/.exec(output)?.[1];
    if (child.exitCode !== null) throw new Error(`gateway exited at start:\n${output}`);
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`gateway did not start in time:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error('no pid');
  const serving = url;
  const gateway: GatewayProcess = {
    url: serving,
    pid,
    child,
    output: () => output,
    stdout: () => stdout,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, signal);
      return exited;
    },
    metric: (name, labels) => metric({ url: serving }, name, labels),
  };
  started.push(gateway);
  return gateway;
}

/** Two replicas with the same settings (the scale-out tests' usual cluster), started together. */
export async function spawnReplicas(
  upstreams: { paymentUrl: string; kycUrl: string },
  env: Record<string, string>,
): Promise<[GatewayProcess, GatewayProcess]> {
  return Promise.all([spawnGateway(upstreams, env), spawnGateway(upstreams, env)]);
}

/** An HS256 token for the test secret (every scope unless told), with further `claims` (`biz`). */
export function testToken(
  sub = 'test-merchant',
  scope = 'transactions:read kyc:read',
  claims: Record<string, unknown> = {},
) {
  return new SignJWT({ scope, ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

/** Posts a query; resolves to the parsed body and status. */
export async function query(
  gateway: { url: string },
  text: string,
  token: string,
): Promise<{ status: number; body: { data?: Record<string, unknown>; errors?: unknown[] } }> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: text }),
    signal: AbortSignal.timeout(scaled(10_000)),
  });
  return { status: response.status, body: (await response.json()) as never };
}

export interface Followed {
  /** The statuses received, in order. */
  statuses: string[];
  /** Errors the stream ended with. */
  errors: unknown[];
  /** True when the server completed the stream. */
  completed: boolean;
  /** Resolves when the stream ends (completed, errored or stopped). */
  done: Promise<void>;
  /** Leaves the stream. */
  stop(): void;
  /** Resolves once the first status arrived. */
  first: Promise<void>;
}

/** Follows `transactionStatus(txRef)` with the graphql-sse client (distinct connections). */
export function follow(gateway: { url: string }, txRef: string, token: string): Followed {
  const client = createSseClient({
    url: `${gateway.url}/graphql`,
    headers: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  let markFirst: () => void = () => {};
  let stopped = false;
  const followed: Followed = {
    statuses: [],
    errors: [],
    completed: false,
    done: Promise.resolve(),
    stop: () => {},
    first: new Promise<void>((resolve) => {
      markFirst = resolve;
    }),
  };
  followed.done = new Promise<void>((resolve) => {
    const dispose = client.subscribe<{ transactionStatus: { status: string } }>(
      {
        query: 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { txRef status } }',
        variables: { txRef },
      },
      {
        next: (result) => {
          const status = result.data?.transactionStatus.status;
          if (status) followed.statuses.push(status);
          if (result.errors) followed.errors.push(...result.errors);
          markFirst();
        },
        error: (error) => {
          followed.errors.push(error instanceof Error ? error.message : error);
          markFirst();
          resolve();
        },
        complete: () => {
          // graphql-sse also calls complete when the client itself leaves.
          if (!stopped) followed.completed = true;
          markFirst();
          resolve();
        },
      },
    );
    followed.stop = () => {
      stopped = true;
      dispose();
      client.dispose();
      resolve();
    };
  });
  return followed;
}

/** What a gateway process that stopped by itself printed, and its exit code. */
export interface ExitedProcess {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node src/main.ts` with only `env` (and PATH, HOME) until it exits by itself, as a start
 * that settings must refuse. Killed by PID (code null) as soon as it serves instead, or after `ms`.
 */
export async function runToExit(
  env: Record<string, string>,
  ms = scaled(15_000),
): Promise<ExitedProcess> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const kill = (): void => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('serving GraphQL')) kill();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(kill, ms);
  // 'close', not 'exit': the output is complete once the pipes are closed.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** `npm start` as a newcomer runs it: `node src/main.ts` with `env`, until it prints `pattern`. */
export async function startMain(
  env: Record<string, string>,
  pattern: RegExp,
): Promise<{ child: ChildProcess; found: string; output: () => string }> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const until = Date.now() + scaled(15_000);
  for (;;) {
    const found = pattern.exec(out)?.[1];
    if (found !== undefined) return { child, found, output: () => out };
    if (Date.now() > until || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`${pattern} was not printed:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
