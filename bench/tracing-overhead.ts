/**
 * `node bench/tracing-overhead.ts`: what tracing costs in scenario S1 of `npm run bench` (a new
 * txRef per request, one upstream call, auth on): the gateway without tracing, with every trace
 * exported (OTLP/HTTP protobuf to a sink on 127.0.0.1 that answers 200), and with tracing on but
 * every trace sampled out (`OTEL_TRACES_SAMPLER=always_off`). The three run in turn, `ROUNDS`
 * times (default 2), `DURATION_S` seconds each (default 8), `CONNECTIONS` (default 32). Besides
 * requests per second and latency, it prints the gateway's CPU time per request, which moves much
 * less than throughput on a machine shared with other work.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import {
  cpuSeconds,
  GATEWAY_PORT,
  gatewayEnv,
  JSON_PORT,
  load,
  post,
  round,
  type Started,
  startNode,
} from './lib.ts';
import { BENCH_JWT_SECRET, transactionBody } from './queries.ts';

const ROUNDS = Number(process.env.ROUNDS ?? '2');
const DURATION_S = Number(process.env.DURATION_S ?? '8');
const CONNECTIONS = Number(process.env.CONNECTIONS ?? '32');

// The collector: takes every export, keeps nothing.
let exported = 0;
const sink = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    exported += 1;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
sink.listen(0, '127.0.0.1');
await once(sink, 'listening');
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const stub = await startNode({
  name: 'stub',
  script: 'bench/upstream-stub.ts',
  env: {},
  portPattern: JSON_PORT,
});

const token = await new SignJWT({ scope: 'transactions:read kyc:read' })
  .setProtectedHeader({ alg: 'HS256' })
  .setSubject('bench')
  .setExpirationTime('2h')
  .sign(new TextEncoder().encode(BENCH_JWT_SECRET));

const VARIANTS: Array<{ name: string; env: Record<string, string> }> = [
  { name: 'tracing off', env: {} },
  { name: 'tracing on, every trace exported', env: { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl } },
  {
    name: 'tracing on, sampled out (always_off)',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_TRACES_SAMPLER: 'always_off' },
  },
];

let sequence = 0;
function nextTag(): number {
  sequence += 1;
  return sequence;
}
const results = new Map<string, Array<{ rps: number; p50: number; p99: number; cpuMs: number }>>();
for (let round_ = 0; round_ < ROUNDS; round_++) {
  for (const variant of VARIANTS) {
    const gateway: Started = await startNode({
      name: variant.name,
      script: 'src/main.ts',
      env: gatewayEnv(stub.port, { AUTH_JWT_SECRET: BENCH_JWT_SECRET, ...variant.env }),
      portPattern: GATEWAY_PORT,
    });
    const url = `http://127.0.0.1:${gateway.port}/graphql`;
    const headers = { authorization: `Bearer ${token}` };
    await post(url, transactionBody('NT-GENWARMUP'), headers);
    // Warm-up, then the measured run.
    await load({
      url,
      connections: CONNECTIONS,
      durationS: 2,
      headers,
      body: () => transactionBody(`NT-GENW${nextTag()}`),
    });
    const cpuBefore = cpuSeconds(gateway.pid);
    const result = await load({
      url,
      connections: CONNECTIONS,
      durationS: DURATION_S,
      headers,
      body: () => transactionBody(`NT-GENT${nextTag()}`),
    });
    const cpuMs = ((cpuSeconds(gateway.pid) - cpuBefore) * 1000) / result.requests;
    await gateway.stop();
    const list = results.get(variant.name) ?? [];
    list.push({ rps: result.rps, p50: result.p50Ms, p99: result.p99Ms, cpuMs });
    results.set(variant.name, list);
    console.log(
      `${variant.name}: ${round(result.rps, 0)} req/s, p50 ${round(result.p50Ms, 1)} ms, p99 ${round(result.p99Ms, 1)} ms, ${round(cpuMs, 3)} CPU ms/request` +
        (result.non2xx || result.errors
          ? ` (non-2xx ${result.non2xx}, errors ${result.errors})`
          : ''),
    );
  }
}
await stub.stop();
sink.close();

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const base = mean((results.get('tracing off') ?? []).map((r) => r.rps));
console.log(`\nS1, auth on, ${CONNECTIONS} connections, ${DURATION_S} s × ${ROUNDS} rounds:`);
const baseCpu = mean((results.get('tracing off') ?? []).map((r) => r.cpuMs));
console.log('| variant | req/s | vs off | p50 ms | p99 ms | CPU ms/request | vs off |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const [name, list] of results) {
  const rps = mean(list.map((r) => r.rps));
  const cpu = mean(list.map((r) => r.cpuMs));
  console.log(
    `| ${name} | ${round(rps, 0)} | ${round(((rps - base) / base) * 100, 1)} % | ${round(mean(list.map((r) => r.p50)), 1)} | ${round(mean(list.map((r) => r.p99)), 1)} | ${round(cpu, 3)} | +${round(((cpu - baseCpu) / baseCpu) * 100, 1)} % |`,
  );
}
console.log(`(${exported} exports received by the sink)`);
