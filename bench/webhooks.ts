/**
 * `npm run bench:webhooks`: push instead of poll, measured. Two gateway processes
 * (`node src/main.ts`) share one redis-server, in front of a payment stand-in in this process
 * whose references stay PENDING until the run settles them. 50 subscribers (each its own token)
 * follow 10 references each over SSE (graphql-sse, distinct connections), alternating replicas:
 * 500 streams, 5 per reference, 100 references. Then 1,000 signed notifications:
 *
 * 1. one per reference as soon as its first stream is open, while it is still PENDING (the
 *    record becomes covered, so its poller waits `WEBHOOK_POLL_BACKOFF` times longer: what
 *    follows is push, not poll);
 * 2. per reference, the stand-in settles it and 9 notifications go out at once, spread over
 *    both replicas (a provider's event and its duplicates and retries).
 *
 * Reported: p50/p99/max from the first notification after settling to each subscriber's
 * SUCCESSFUL (500 samples), upstream calls per notification, the most calls in flight for one
 * reference, and the polls made meanwhile. Settings: `BENCH_WEBHOOK_LATENCY_MS` (the stand-in's
 * delay per answer, default 20).
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-sse';
import { transactionBody } from '../test/helpers/fixture.ts';
import {
  type GatewayProcess,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../test/helpers/processes.ts';
import { startRedis } from '../test/helpers/redis.ts';

const SECRET = 'whsec_bench_0123456789abcdef0123456789';
const REFS = 100;
const SUBSCRIBERS = 50;
const REFS_PER_SUBSCRIBER = 10;
const NOTIFICATIONS = 1000;
const LATENCY_MS = Number(process.env.BENCH_WEBHOOK_LATENCY_MS ?? '20');
const RUN = Date.now().toString(36).toUpperCase();
const refs = Array.from({ length: REFS }, (_, i) => `NT-WHB${RUN}${i}`);

// --- the payment stand-in: PENDING until settled, calls and in-flight counted per reference ---
const settled = new Set<string>();
const calls = new Map<string, number>();
const inFlight = new Map<string, number>();
const maxInFlight = new Map<string, number>();
const stub = createServer((req, res) => {
  const txRef = (req.url ?? '').split('/').pop() ?? '';
  calls.set(txRef, (calls.get(txRef) ?? 0) + 1);
  const now = (inFlight.get(txRef) ?? 0) + 1;
  inFlight.set(txRef, now);
  maxInFlight.set(txRef, Math.max(now, maxInFlight.get(txRef) ?? 0));
  const done = settled.has(txRef);
  setTimeout(() => {
    inFlight.set(txRef, (inFlight.get(txRef) ?? 1) - 1);
    const body = JSON.stringify(
      transactionBody({
        paymentRef: txRef,
        txStatus: done ? 'SUCCESSFUL' : 'PENDING',
        txIsSucces: done,
      }),
    );
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  }, LATENCY_MS);
});
stub.listen(0, '127.0.0.1');
await new Promise((resolve) => stub.once('listening', resolve));
const stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;

function sign(body: string): string {
  const t = Math.floor(Date.now() / 1000);
  return `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`;
}

let sequence = 0;
async function notify(gateway: GatewayProcess, txRef: string): Promise<number> {
  sequence += 1;
  const body = JSON.stringify({ id: `evt_${RUN}_${sequence}`, event: 'PAYMENT_UPDATED', txRef });
  const response = await fetch(`${gateway.url}/webhooks/payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-signature': sign(body) },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const redis = await startRedis();
const env = {
  CACHE_URL: redis.url,
  WEBHOOK_SECRET: SECRET,
  LIVE_POLL_MS: '2000',
  WEBHOOK_POLL_BACKOFF: '50',
  LIVE_HEARTBEAT_MS: '1000',
  LOG_LEVEL: 'error',
};
const upstreams = { paymentUrl: stubUrl, kycUrl: stubUrl };
const [first, second] = await Promise.all([
  spawnGateway(upstreams, env),
  spawnGateway(upstreams, env),
]);
const replica = (i: number): GatewayProcess => (i % 2 === 0 ? first : second);
const polls = async (): Promise<number> =>
  (await first.metric('gateway_live_polls_total')) +
  (await second.metric('gateway_live_polls_total'));

try {
  // --- 50 subscribers × 10 references, alternating replicas ---
  const settledAt = new Map<string, number>();
  const latencies: number[] = [];
  const firstSeen: Promise<void>[] = [];
  const ended: Promise<void>[] = [];
  const errors: unknown[] = [];
  const clients: ReturnType<typeof createClient>[] = [];
  const statuses: number[] = [];
  // Phase 1, as streams open: the reference's calls so far (its first reads) are not the run's.
  const callsBeforeCover = new Map<string, number>();
  const covering: Promise<void>[] = [];
  const cover = (txRef: string, i: number): void => {
    if (callsBeforeCover.has(txRef)) return;
    callsBeforeCover.set(txRef, calls.get(txRef) ?? 0);
    covering.push(notify(replica(i), txRef).then((status) => void statuses.push(status)));
  };
  const pollsBefore = await polls();
  const subscribing = performance.now();
  for (let s = 0; s < SUBSCRIBERS; s += 1) {
    const token = await testToken(`bench-subscriber-${s}`, 'transactions:read');
    for (let k = 0; k < REFS_PER_SUBSCRIBER; k += 1) {
      const txRef = refs[(s * REFS_PER_SUBSCRIBER + k) % REFS] as string;
      const client = createClient({
        url: `${replica(s + k).url}/graphql`,
        headers: { authorization: `Bearer ${token}` },
        retryAttempts: 0,
      });
      clients.push(client);
      let markFirst: () => void = () => {};
      firstSeen.push(new Promise((resolve) => (markFirst = resolve)));
      ended.push(
        new Promise((resolve) => {
          client.subscribe<{ transactionStatus: { status: string } }>(
            { query: `subscription { transactionStatus(txRef: "${txRef}") { status } }` },
            {
              next: (result) => {
                const status = result.data?.transactionStatus.status;
                if (status === 'SUCCESSFUL') {
                  latencies.push(performance.now() - (settledAt.get(txRef) ?? Number.NaN));
                }
                if (result.errors) errors.push(result.errors);
                if (status === 'PENDING') cover(txRef, s + k);
                markFirst();
              },
              error: (error) => {
                errors.push(error);
                markFirst();
                resolve();
              },
              complete: () => {
                markFirst();
                resolve();
              },
            },
          );
        }),
      );
    }
  }
  await Promise.all(firstSeen);
  console.log(
    `${firstSeen.length} SSE streams open (${SUBSCRIBERS} subscribers, 2 replicas) in ${Math.round(performance.now() - subscribing)} ms`,
  );

  await Promise.all(covering);
  await new Promise((resolve) => setTimeout(resolve, 500));

  // --- phase 2: per reference, settle, then 9 notifications at once over both replicas ---
  const perRef = (NOTIFICATIONS - REFS) / REFS;
  // In flight per reference is judged over the bursts; before them a subscriber's first read
  // (through the cache) may still be under way on one replica while a covering notification's
  // fresh fetch runs on the other.
  const maxInFlightBefore = Math.max(...refs.map((txRef) => maxInFlight.get(txRef) ?? 0));
  maxInFlight.clear();
  const started = performance.now();
  await Promise.all(
    refs.map(async (txRef, i) => {
      // Spread over one second, as a provider's traffic would be.
      await new Promise((resolve) => setTimeout(resolve, (i * 1000) / REFS));
      settled.add(txRef);
      settledAt.set(txRef, performance.now());
      const burst = Array.from({ length: perRef }, (_, n) => notify(replica(i + n), txRef));
      for (const status of await Promise.all(burst)) statuses.push(status);
    }),
  );
  await Promise.race([Promise.all(ended), new Promise((resolve) => setTimeout(resolve, 15_000))]);
  const took = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 300));
  const pollsAfter = await polls();

  const sorted = [...latencies].sort((x, y) => x - y);
  const upstreamCalls = refs.reduce(
    (sum, txRef) => sum + (calls.get(txRef) ?? 0) - (callsBeforeCover.get(txRef) ?? 0),
    0,
  );
  const pollCount = pollsAfter - pollsBefore;
  const mostInFlight = Math.max(...refs.map((txRef) => maxInFlight.get(txRef) ?? 0));
  const accepted = statuses.filter((s) => s === 202).length;
  const summary = {
    replicas: 2,
    subscribers: SUBSCRIBERS,
    streams: firstSeen.length,
    refs: REFS,
    notifications: statuses.length,
    accepted,
    upstreamLatencyMs: LATENCY_MS,
    notificationToEventMs: {
      samples: sorted.length,
      p50: Math.round(percentile(sorted, 50)),
      p99: Math.round(percentile(sorted, 99)),
      max: Math.round(sorted.at(-1) ?? Number.NaN),
    },
    upstreamCalls,
    pollsDuringRun: pollCount,
    upstreamCallsPerNotification: Math.round((upstreamCalls / statuses.length) * 1000) / 1000,
    maxInFlightPerRef: mostInFlight,
    maxInFlightPerRefWhileSubscribing: maxInFlightBefore,
    phase2Ms: Math.round(took),
    errors: errors.length,
  };
  console.log(JSON.stringify(summary, null, 2));
  console.log(
    `\n${statuses.length} notifications (${accepted} accepted) for ${REFS} refs → ${sorted.length} events to ${firstSeen.length} streams: ` +
      `notification→event p50 ${summary.notificationToEventMs.p50} ms, p99 ${summary.notificationToEventMs.p99} ms; ` +
      `${upstreamCalls} upstream calls (${pollCount} of them polls) = ${summary.upstreamCallsPerNotification} per notification; ` +
      `at most ${mostInFlight} in flight per ref during the bursts (${maxInFlightBefore} while subscribing).`,
  );
  for (const client of clients) client.dispose();
  const ok =
    summary.upstreamCallsPerNotification <= 1 &&
    mostInFlight <= 1 &&
    sorted.length === firstSeen.length;
  if (!ok) process.exitCode = 1;
} finally {
  await stopAllGateways();
  await redis.stop();
  stub.closeAllConnections();
  stub.close();
}
