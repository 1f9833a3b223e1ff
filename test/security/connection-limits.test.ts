/**
 * Long-lived resources are accounted per caller. graphql-sse reservations: tokens from a
 * CSPRNG, bound to the caller that reserved them, dropped when unused (SSE_RESERVATION_UNUSED_MS), counted with WebSockets against
 * CONNECTIONS_MAX_PER_CALLER; a WebSocket closes 4403 when its token expires (a stream on another
 * transport ends with UNAUTHENTICATED); tokens without `sub` are keyed by the token, not the
 * address; LIVE_MAX_PER_CALLER holds across replicas sharing Redis.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { until } from '../helpers/eventually.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';
import { runOver } from '../helpers/transports.ts';

let sandbox: Sandbox;
let gateway: TestGateway;

beforeAll(async () => {
  sandbox = await startSandbox({ pendingSeconds: 60 });
  gateway = await startGateway(sandboxUpstreams(sandbox), {
    CONNECTIONS_MAX_PER_CALLER: '5',
    LIVE_POLL_MS: '200',
  });
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

const STATUS = 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { status } }';

const reserve = (token: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/graphql`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, ...headers },
  });

/** Opens a graphql-transport-ws connection; resolves when acknowledged or closed. */
function openSocket(url: string, token: string): Promise<{ socket: WebSocket; close?: number }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    socket.on('open', () =>
      socket.send(
        JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }),
      ),
    );
    socket.on('message', (data) => {
      if (JSON.parse(String(data)).type === 'connection_ack') resolve({ socket });
    });
    socket.on('close', (close) => resolve({ socket, close }));
  });
}

describe('graphql-sse reservations', () => {
  it('are bounded per caller: 2,000 attempts hold 5, the rest are 429', async () => {
    const token = await gateway.token({ sub: 'usr_reserver' });
    const statuses = new Map<number, number>();
    for (let batch = 0; batch < 20; batch += 1) {
      const answers = await Promise.all(Array.from({ length: 100 }, () => reserve(token)));
      for (const answer of answers) {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        await answer.body?.cancel();
      }
    }
    expect(Object.fromEntries(statuses)).toEqual({ 201: 5, 429: 1995 });
    // Another caller is not affected.
    const other = await reserve(await gateway.token({ sub: 'usr_other' }));
    expect(other.status).toBe(201);
  });

  it('come from a CSPRNG (256 bits), never from the client', async () => {
    const token = await gateway.token({ sub: 'usr_tokens' });
    const chosen = await reserve(token, { 'x-graphql-event-stream-token': 'my-own-token' });
    expect(chosen.status).toBe(201);
    const issued = await chosen.text();
    expect(issued).not.toBe('my-own-token');
    expect(issued).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("belong to their caller: another caller's operation is refused and nothing is delivered", async () => {
    const alice = await gateway.token({ sub: 'usr_alice' });
    const mallory = await gateway.token({ sub: 'usr_mallory' });
    const streamToken = await (await reserve(alice)).text();
    const withToken = (token: string) => ({
      authorization: `Bearer ${token}`,
      'x-graphql-event-stream-token': streamToken,
    });
    const stream = await fetch(`${gateway.url}/graphql`, {
      headers: { ...withToken(alice), accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const foreign = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { ...withToken(mallory), 'content-type': 'application/json' },
      body: JSON.stringify({
        query: '{ transaction(txRef: "NT-SUCCESS001") { customer { email } } }',
        extensions: { operationId: 'x' },
      }),
    });
    expect(foreign.status).toBe(404);
    const hijack = await fetch(`${gateway.url}/graphql`, {
      headers: { ...withToken(mallory), accept: 'text/event-stream' },
    });
    expect(hijack.status).toBe(404);
    // Alice's stream got nothing but its opening comment.
    const reader = stream.body?.getReader();
    const first = await reader?.read();
    const more = await Promise.race([reader?.read(), sleep(300, 'nothing')]);
    expect(new TextDecoder().decode(first?.value)).toBe(':\n\n');
    expect(more).toBe('nothing');
    await reader?.cancel();
  });

  it('are dropped SSE_RESERVATION_UNUSED_MS after being made when their stream is never opened', async () => {
    // Its own gateway with the time injected (30 s by default): the drop is awaited, not slept.
    // Long enough that the five reservations and the refused sixth are made well within it.
    const unusedMs = 3000;
    const idle = await startGateway(sandboxUpstreams(sandbox), {
      CONNECTIONS_MAX_PER_CALLER: '5',
      SSE_RESERVATION_UNUSED_MS: String(unusedMs),
    });
    try {
      const token = await idle.token({ sub: 'usr_idle' });
      const reserveIdle = async () => {
        const answer = await fetch(`${idle.url}/graphql`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}` },
        });
        await answer.body?.cancel();
        return answer.status;
      };
      // Before the first reservation is made: none can have been dropped sooner than this.
      const started = performance.now();
      for (let i = 0; i < 5; i += 1) expect(await reserveIdle()).toBe(201);
      expect(await reserveIdle()).toBe(429);
      // A refused attempt reserves nothing, so polling with attempts changes nothing.
      await until(async () => (await reserveIdle()) === 201, 10_000);
      expect(performance.now() - started).toBeGreaterThanOrEqual(unusedMs);
    } finally {
      await idle.close();
    }
  });
});

describe('WebSockets', () => {
  it('count with reservations per caller: one more closes 4429', async () => {
    const token = await gateway.token({ sub: 'usr_sockets' });
    for (let i = 0; i < 2; i += 1) expect((await reserve(token)).status).toBe(201);
    const open = await Promise.all([1, 2, 3].map(() => openSocket(gateway.url, token)));
    expect(open.map((o) => o.close)).toEqual([undefined, undefined, undefined]);
    const extra = await openSocket(gateway.url, token);
    expect(extra.close).toBe(4429);
    expect((await reserve(token)).status).toBe(429);
    // Closing one gives its slot back.
    open[0]?.socket.close(1000);
    await sleep(200);
    const again = await openSocket(gateway.url, token);
    expect(again.close).toBeUndefined();
    for (const o of [...open, again]) o.socket.close(1000);
  });

  it('close 4403 when their token expires', async () => {
    const token = await gateway.token({ sub: 'usr_expiring', expiresIn: '2s' });
    const started = Date.now();
    const { socket, close } = await openSocket(gateway.url, token);
    expect(close).toBeUndefined();
    const code = await new Promise<number>((resolve) => socket.on('close', resolve));
    expect(code).toBe(4403);
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

it('a subscription over SSE ends with UNAUTHENTICATED when its token expires', async () => {
  const token = await gateway.token({ sub: 'usr_exp_sse', expiresIn: '2s' });
  const out = await runOver(
    'SSE distinct',
    gateway.url,
    { query: STATUS, variables: { txRef: `NT-PENDING${Date.now()}` } },
    { token, timeoutMs: 5000 },
  );
  expect(out.results[0]).toEqual({ data: { transactionStatus: { status: 'PENDING' } } });
  expect(out.codes).toEqual(['UNAUTHENTICATED']);
  expect(out.raw).toContain('event: complete');
});

it("tokens without sub are each their own caller, not their address's", async () => {
  const limited = await startGateway(sandboxUpstreams(sandbox), {
    RATE_LIMIT_RPS: '1',
    RATE_LIMIT_BURST: '3',
    SERVICE_RATE_LIMIT_RPS: '1',
    SERVICE_RATE_LIMIT_BURST: '3',
  });
  try {
    const ask = (token: string) =>
      fetch(`${limited.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      }).then((r) => r.status);
    const a = await limited.token({ sub: null, scope: null });
    const b = await limited.token({ sub: null, scope: null, expiresIn: '6m' });
    // Eight at once against a burst of 3 at 1 per second: some are refused however slowly a
    // busy machine sends them (all eight would need more than five seconds).
    const first = await Promise.all(Array.from({ length: 8 }, () => ask(a)));
    expect(first.filter((status) => status === 200).length).toBeGreaterThanOrEqual(3);
    expect(first).toContain(429);
    expect(await ask(b)).toBe(200);
  } finally {
    await limited.close();
  }
});

const skipRedis = skipRedisTests('connection-limits');
describe.skipIf(skipRedis)('LIVE_MAX_PER_CALLER with Redis', () => {
  let redis: TestRedis;
  let replicas: TestGateway[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    const env = { CACHE_URL: redis.url, LIVE_MAX_PER_CALLER: '1', LIVE_POLL_MS: '200' };
    replicas = await Promise.all([
      startGateway(sandboxUpstreams(sandbox), env),
      startGateway(sandboxUpstreams(sandbox), env),
    ]);
    await sleep(500);
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await redis?.stop();
  });

  it('holds across replicas', async () => {
    const [a, b] = replicas as [TestGateway, TestGateway];
    const token = await a.token({ sub: 'usr_two_replicas' });
    const txRef = `NT-PENDING${Date.now()}`;
    const holding = runOver(
      'SSE distinct',
      a.url,
      { query: STATUS, variables: { txRef } },
      {
        token,
        timeoutMs: 2000,
      },
    );
    // The first watch holds the caller's one slot once a poller runs for it (on either replica).
    const pollers = async () =>
      (await metric(a, 'gateway_live_pollers')) + (await metric(b, 'gateway_live_pollers'));
    await until(async () => (await pollers()) >= 1, 5000);
    const second = await runOver(
      'SSE distinct',
      b.url,
      { query: STATUS, variables: { txRef: `${txRef}2` } },
      { token },
    );
    expect(second.codes).toEqual(['RATE_LIMITED']);
    expect((await holding).codes).toEqual([]);
    // Once the first watch has ended, its slot is free again on every replica.
    await until(async () => {
      const third = await runOver(
        'SSE distinct',
        b.url,
        { query: STATUS, variables: { txRef: `${txRef}3` } },
        { token, maxResults: 1 },
      );
      return third.codes.length === 0;
    }, 5000);
  });
});

it('MAX_CONNECTIONS bounds the sockets of the process', async () => {
  const small = await startGateway(sandboxUpstreams(sandbox), { MAX_CONNECTIONS: '3' });
  const { port, hostname } = new URL(small.url);
  const sockets: Socket[] = [];
  try {
    const closedSoon = async () => {
      const socket = connect(Number(port), hostname);
      sockets.push(socket);
      await once(socket, 'connect');
      const closed = once(socket, 'close').then(() => true);
      return Promise.race([closed, sleep(500, false)]);
    };
    expect([await closedSoon(), await closedSoon(), await closedSoon()]).toEqual([
      false,
      false,
      false,
    ]);
    expect(await closedSoon()).toBe(true);
  } finally {
    for (const socket of sockets) socket.destroy();
    await small.close();
  }
});
