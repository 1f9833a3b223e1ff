/**
 * A rolling restart as an operator does one: two `node src/main.ts` replicas sharing one real
 * redis-server, behind a round-robin balancer that probes `/readyz` every 500 ms. Queries run at
 * 200 per second through the balancer, with subscriptions open over graphql-sse (distinct
 * connections), `multipart/mixed` and graphql-ws; one replica gets SIGTERM. No request may fail,
 * every stream of the stopped replica must end as its protocol ends one (SSE `complete`, the
 * closing boundary, WebSocket 1001), the other replica's streams go on, and a client that
 * subscribes again is served.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Balancer, startBalancer } from '../helpers/balancer.ts';
import { until } from '../helpers/eventually.ts';
import {
  type GatewayProcess,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { type RedisBench, skipRedisTests, startRedisBench } from '../helpers/redis.ts';

const skip = skipRedisTests('rolling-restart');
const RATE = 200;
const MAX_IN_FLIGHT = 50;
// Longer than the balancer needs to see the 503 even on a busy machine: two probe periods and
// two probe timeouts (2 s each) are 5 s.
const DRAIN_MS = 10_000;
const SUBSCRIPTION = 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { status } }';

let bench: RedisBench;
let a: GatewayProcess;
let b: GatewayProcess;
let balancer: Balancer;
let token: string;

beforeAll(async () => {
  if (skip) return;
  // Every payment stays PENDING: subscriptions stay open until the test or a shutdown ends them.
  bench = await startRedisBench(Number.POSITIVE_INFINITY);
  const env = {
    CACHE_URL: bench.redis.url,
    // Readiness pings Redis within the command timeout (250 ms by default): on a busy machine
    // the replica that stays would fail its probes and leave the balancer with none.
    CACHE_COMMAND_TIMEOUT_MS: '5000',
    SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    SHUTDOWN_GRACE_MS: '5000',
    LIVE_POLL_MS: '500',
    // One token follows all the test's streams: more than a caller may hold by default.
    LIVE_MAX_PER_CALLER: '100',
  };
  [a, b] = await Promise.all([
    spawnGateway(bench.upstreams, env),
    spawnGateway(bench.upstreams, env),
  ]);
  balancer = await startBalancer([a.url, b.url], 500);
  token = await testToken();
}, 30_000);

afterAll(async () => {
  await balancer?.close();
  await stopAllGateways();
  await bench?.close();
});

/** How a stream ended: `complete`/`1001` are clean ends; anything else is a failure. */
type Ending = 'open' | 'complete' | 'closed 1001' | string;

interface Stream {
  kind: 'sse' | 'multipart' | 'websocket';
  ending: Ending;
  results: number;
  first: Promise<void>;
  /** Resolves `first`: a result (or an error) arrived. */
  markFirst: () => void;
  stop: () => void;
}

/** A result of a client library's stream: counted, or the error the stream ends with. */
function received(stream: Stream, result: { errors?: readonly unknown[] }): void {
  if (result.errors) stream.ending = `error: ${JSON.stringify(result.errors)}`;
  else stream.results++;
  stream.markFirst();
}

/** A stream just opened, with nothing received yet. */
function opened(kind: Stream['kind']): Stream {
  const stream: Stream = {
    kind,
    ending: 'open',
    results: 0,
    first: Promise.resolve(),
    markFirst: () => {},
    stop: () => {},
  };
  stream.first = new Promise((resolve) => {
    stream.markFirst = resolve;
  });
  return stream;
}

function sseStream(url: string, txRef: string): Stream {
  const client = createSseClient({
    url: `${url}/graphql`,
    headers: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  const stream = opened('sse');
  const dispose = client.subscribe(
    { query: SUBSCRIPTION, variables: { txRef } },
    {
      next: (result) => received(stream, result),
      error: (error) => {
        stream.ending = `error: ${error instanceof Error ? error.message : String(error)}`;
      },
      complete: () => {
        if (stream.ending === 'open') stream.ending = 'complete';
      },
    },
  );
  stream.stop = () => {
    stream.ending = stream.ending === 'open' ? 'stopped' : stream.ending;
    dispose();
    client.dispose();
  };
  return stream;
}

/** Reads a `multipart/mixed` subscription off the wire: its parts and whether it closed. */
function multipartStream(url: string, txRef: string): Stream {
  const abort = new AbortController();
  const stream = opened('multipart');
  stream.stop = () => {
    if (stream.ending === 'open') stream.ending = 'stopped';
    abort.abort();
  };
  void (async () => {
    try {
      const answer = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'multipart/mixed;subscriptionSpec=1.0',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ query: SUBSCRIPTION, variables: { txRef } }),
        signal: abort.signal,
      });
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        stream.results = text.split('"status":"PENDING"').length - 1;
        if (text.includes('"errors"')) stream.ending = `error: ${text.slice(-300)}`;
        if (stream.results > 0 || text.includes('"errors"')) stream.markFirst();
      }
      if (stream.ending === 'open') {
        stream.ending = text.endsWith('--graphql--\r\n') ? 'complete' : 'cut: no closing boundary';
      }
    } catch (error) {
      if (stream.ending === 'open') {
        stream.ending = `error: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
  })();
  return stream;
}

function webSocketStream(url: string, txRef: string): Stream {
  const stream = opened('websocket');
  const client = createWsClient({
    url: `${url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
    on: {
      closed: (event) => {
        if (stream.ending === 'open') stream.ending = `closed ${(event as CloseEvent).code}`;
      },
    },
  });
  const dispose = client.subscribe(
    { query: SUBSCRIPTION, variables: { txRef } },
    {
      next: (result) => received(stream, result),
      error: () => {},
      complete: () => {
        if (stream.ending === 'open') stream.ending = 'complete (no 1001)';
      },
    },
  );
  stream.stop = () => {
    if (stream.ending === 'open') stream.ending = 'stopped';
    dispose();
    void client.dispose();
  };
  return stream;
}

/** `promise`'s value, or `timed out` once `ms` have passed (the test then fails on it). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> {
  return Promise.race([
    promise,
    new Promise<'timed out'>((resolve) => setTimeout(resolve, ms, 'timed out')),
  ]);
}

const OPENERS = { sse: sseStream, multipart: multipartStream, websocket: webSocketStream };

/** Queries at `rate` per second through the balancer until stopped; counts what failed. */
function queryLoad(url: string, rate: number) {
  const failures: string[] = [];
  const pending = new Set<Promise<void>>();
  let sent = 0;
  let ok = 0;
  const started = performance.now();
  const one = async (n: number): Promise<void> => {
    try {
      const answer = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: `{ transaction(txRef: "NT-Q${n % 40}") { status } }` }),
        signal: AbortSignal.timeout(15_000),
      });
      const body = (await answer.json()) as { data?: { transaction?: { status?: string } } };
      if (answer.status === 200 && body.data?.transaction?.status === 'PENDING') ok++;
      else failures.push(`${answer.status} ${JSON.stringify(body).slice(0, 200)}`);
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      failures.push(`${error instanceof Error ? error.message : String(error)} ${cause ?? ''}`);
    }
  };
  // Whatever a busy machine delays, the requests due by now are sent (in a batch, if late), with
  // at most MAX_IN_FLIGHT waiting for their answer: a machine too busy for the rate slows the
  // load down (the achieved rate is reported) instead of piling up requests until they time out.
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    while (sent < due && pending.size < MAX_IN_FLIGHT) {
      const request = one(sent++);
      pending.add(request);
      void request.finally(() => pending.delete(request));
    }
  }, 10);
  return {
    failures,
    get sent() {
      return sent;
    },
    get ok() {
      return ok;
    },
    /** Requests per second sent so far. */
    rate: () => Math.round(sent / ((performance.now() - started) / 1000)),
    stop: async () => {
      clearInterval(timer);
      await Promise.all([...pending]);
    },
  };
}

describe.skipIf(skip)('a rolling restart behind a load balancer', () => {
  it('SIGTERM to one of two replicas under 200 req/s and open streams: no request fails, every stream of it ends cleanly', async () => {
    // Opened one at a time, with nothing else going through the balancer: round robin puts
    // every other stream on each replica, so each kind has streams on the one stopped.
    const streams: Stream[] = [];
    for (const kind of ['sse', 'multipart', 'websocket'] as const) {
      for (let i = 0; i < 4; i++) {
        const stream = OPENERS[kind](balancer.url, `NT-LIVE${kind}${i}`);
        streams.push(stream);
        await stream.first;
      }
    }
    const load = queryLoad(balancer.url, RATE);
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const exited = a.stop('SIGTERM');
    // Out of rotation through its readiness answer (within a probe period or two).
    await until(() => !balancer.inRotation(a.url), DRAIN_MS);
    const code = await within(exited, DRAIN_MS + 10_000);
    // The streams of the stopped replica have ended (by now, or within a moment).
    await until(() => streams.filter((s) => s.ending !== 'open').length >= 6, 5000).catch(() => {});
    // Clients that subscribe again are served by the replica left.
    const again = (['sse', 'multipart', 'websocket'] as const).map((kind) =>
      OPENERS[kind](balancer.url, `NT-LIVE${kind}AGAIN`),
    );
    await within(Promise.all(again.map((stream) => stream.first)), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rate = load.rate();
    await load.stop();
    for (const stream of [...streams, ...again]) stream.stop();

    const ended = streams.filter((s) => s.ending !== 'stopped');
    console.info(
      `[rolling-restart] ${load.sent} queries at ${rate}/s, ${load.ok} ok, ${load.failures.length} failed, ${balancer.failures.length} refused by the balancer ${JSON.stringify([...new Set(balancer.failures.map((f) => f.reason))])} ${JSON.stringify([...new Set(load.failures)])}; ` +
        `streams ended: ${ended.map((s) => `${s.kind} ${s.ending}`).join(', ')}`,
    );
    expect(code).toBe(0);
    expect(load.failures).toEqual([]);
    expect(balancer.failures).toEqual([]);
    expect(load.ok).toBe(load.sent);
    // Exactly the stopped replica's half of each kind ended, each as its protocol ends a stream.
    for (const kind of ['sse', 'multipart', 'websocket'] as const) {
      const endings = streams.filter((s) => s.kind === kind).map((s) => s.ending);
      const clean = kind === 'websocket' ? 'closed 1001' : 'complete';
      expect(endings.sort()).toEqual([clean, clean, 'stopped', 'stopped'].sort());
    }
    expect(again.map((stream) => stream.results)).not.toContain(0);
  }, 60_000);
});
