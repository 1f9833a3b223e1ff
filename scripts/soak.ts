/**
 * `npm run soak`: drives load against a gateway in sandbox mode for a while (default 10 min)
 * with a mix of good and failing references, and prints the gateway's heap and RSS and the
 * latency percentiles at intervals. Not part of CI. Loopback only; it ends the gateway it started.
 *
 *   SOAK_MINUTES=10 SOAK_CONCURRENCY=32 SOAK_INTERVAL_S=30 npm run soak
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Pool } from 'undici';

const minutes = Number(process.env.SOAK_MINUTES ?? '10');
const concurrency = Number(process.env.SOAK_CONCURRENCY ?? '32');
const intervalMs = Number(process.env.SOAK_INTERVAL_S ?? '30') * 1000;

const gateway = spawn(process.execPath, ['src/main.ts'], {
  env: {
    PATH: process.env.PATH,
    PORT: '0',
    AUTH_DISABLED: 'true',
    RATE_LIMIT_RPS: '0',
    SERVICE_RATE_LIMIT_RPS: '0',
    LOG_LEVEL: 'warn',
    SANDBOX_SLOW_MS: '300',
    UPSTREAM_TIMEOUT_MS: '1000',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let banner = '';
gateway.stdout?.on('data', (chunk: Buffer) => {
  if (banner.length < 100_000) banner += chunk.toString();
});
const deadline = Date.now() + 15_000;
let url: string | undefined;
while (!url) {
  url = /serving GraphQL at (http:\/\/127\.0\.0\.1:\d+)\/graphql/.exec(banner)?.[1];
  if (Date.now() > deadline) throw new Error(`gateway did not start:\n${banner}`);
  await new Promise((resolve) => setTimeout(resolve, 50));
}
const pool = new Pool(url, { connections: concurrency });

/** The mix: mostly good references (new and repeated), some of each failure. */
function nextRef(i: number): string {
  const r = i % 20;
  if (r < 8) return `NT-GEN${i}`; // new every time: reaches the upstream
  if (r < 12) return `NT-GEN${i % 500}`; // repeated: cache hits
  if (r === 12) return 'NT-SUCCESS001';
  if (r === 13) return 'NT-ERROR500';
  if (r === 14) return 'NT-NOTJSON001';
  if (r === 15) return `NT-UNKNOWN${i}`;
  if (r === 16) return `NT-FLAKY${i}`;
  if (r === 17) return 'NT-BADSHAPE001';
  if (r === 18) return 'NT-SLOW001';
  return 'NT-ERROR503';
}

let counter = 0;
let window: number[] = [];
const codes = new Map<string, number>();
let total = 0;
const stopAt = Date.now() + minutes * 60_000;

async function worker(): Promise<void> {
  while (Date.now() < stopAt) {
    const i = counter++;
    const body = JSON.stringify({
      query:
        'query Soak($r: ID!) { transaction(txRef: $r) { txRef status amount card { last4 } } }',
      variables: { r: nextRef(i) },
    });
    const started = performance.now();
    const response = await pool.request({
      method: 'POST',
      path: '/graphql',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const json = (await response.body.json()) as {
      errors?: Array<{ extensions?: { code?: string } }>;
    };
    window.push(performance.now() - started);
    total++;
    for (const error of json.errors ?? []) {
      const code = error.extensions?.code ?? 'NONE';
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

async function sample(label: string): Promise<void> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const rss = read('process_resident_memory_bytes') / 2 ** 20;
  const heap = read('nodejs_heap_size_used_bytes') / 2 ** 20;
  const sorted = [...window].sort((a, b) => a - b);
  const rate = window.length / (intervalMs / 1000);
  console.log(
    `${label.padEnd(8)} requests ${String(total).padStart(8)}  rate ${rate.toFixed(0).padStart(6)}/s  ` +
      `p50 ${percentile(sorted, 0.5).toFixed(1)} ms  p99 ${percentile(sorted, 0.99).toFixed(1)} ms  ` +
      `rss ${rss.toFixed(1)} MiB  heap ${heap.toFixed(1)} MiB`,
  );
  window = [];
}

console.log(`soak: ${minutes} min, ${concurrency} concurrent, against ${url} (sandbox mode)`);
await sample('start');
const ticker = setInterval(() => {
  const elapsed = Math.round((Date.now() - (stopAt - minutes * 60_000)) / 1000);
  void sample(`${elapsed}s`);
}, intervalMs);
await Promise.all(Array.from({ length: concurrency }, worker));
clearInterval(ticker);
await sample('end');
console.log('errors by code:', Object.fromEntries([...codes].sort()));
await pool.close();
gateway.kill('SIGTERM');
await once(gateway, 'exit');
