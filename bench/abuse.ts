/**
 * `npm run bench:abuse`: the three figures of the security review, re-measured against a real
 * gateway process (production settings, auth on) over the bench's upstream stub:
 *
 * 1. retained heap after 1,800 documents of 1,600 `__typename` aliases, sent without a token
 *    and then with one (the heap after a full GC, through bench/gc-probe.ts);
 * 2. an authenticated client's median latency, alone and while 4 clients without a token send a
 *    200-fragment chain at 5 requests a second each (and then with a token);
 * 3. the upstream calls made by one request of 20 aliases × 100 distinct references.
 *
 * Prints a markdown table; nothing is asserted (the tests in test/security/ assert the bounds).
 */
import { SignJWT } from 'jose';
import {
  GATEWAY_PORT,
  gatewayEnv,
  JSON_PORT,
  probeMemory,
  resetStub,
  type Started,
  settleStub,
  sleep,
  startNode,
  stopAllNow,
} from './lib.ts';
import { BENCH_JWT_SECRET, TRANSACTION_QUERY } from './queries.ts';

const typenameAliases = (i: number) =>
  `query Q${i} { ${Array.from({ length: 1600 }, (_, j) => `a${j}: __typename`).join(' ')} }`;
const fragmentChain = `query { gatewayInfo { ...F200 } } fragment F0 on GatewayInfo { version } ${Array.from(
  { length: 200 },
  (_, i) => `fragment F${i + 1} on GatewayInfo { ...F${i} ...F${i} }`,
).join(' ')}`;

async function send(url: string, query: string, token: string | null, variables = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, text: await response.text() };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/** Median latency (ms) of sequential victim requests for `ms`. */
async function victim(url: string, token: string, ms: number): Promise<number> {
  const times: number[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const started = performance.now();
    await send(url, TRANSACTION_QUERY, token, { txRef: 'NT-VICTIM1' });
    times.push(performance.now() - started);
  }
  return median(times);
}

/** 4 clients at 5 requests a second each, until `stop` resolves. */
function attackers(url: string, token: string | null, ms: number): Promise<void> {
  const one = async () => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const started = Date.now();
      await send(url, fragmentChain, token).catch(() => undefined);
      await sleep(Math.max(0, 200 - (Date.now() - started)));
    }
  };
  return Promise.all([one(), one(), one(), one()]).then(() => undefined);
}

async function main(): Promise<void> {
  const stub = await startNode({
    name: 'stub',
    script: 'bench/upstream-stub.ts',
    core: 1,
    env: { STUB_LATENCY_MS: '0' },
    portPattern: JSON_PORT,
  });
  const gateway: Started = await startNode({
    name: 'gateway',
    script: 'src/main.ts',
    core: 0,
    nodeFlags: ['--expose-gc', '--import', './bench/gc-probe.ts'],
    env: gatewayEnv(stub.port, { AUTH_JWT_SECRET: BENCH_JWT_SECRET }),
    portPattern: GATEWAY_PORT,
  });
  const url = `http://127.0.0.1:${gateway.port}/graphql`;
  const token = await new SignJWT({ scope: 'transactions:read kyc:read' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('bench-abuse')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(BENCH_JWT_SECRET));
  const rows: string[][] = [];
  try {
    const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;
    const idle = await probeMemory(gateway);
    for (let i = 0; i < 1800; i++) await send(url, typenameAliases(i), null);
    const afterAnonymous = await probeMemory(gateway);
    for (let i = 0; i < 1800; i++) await send(url, typenameAliases(1800 + i), token);
    const afterToken = await probeMemory(gateway);
    rows.push(['Heap after a full GC: idle', mb(idle.heapUsed)]);
    rows.push(['… after 1,800 documents of 1,600 aliases, no token', mb(afterAnonymous.heapUsed)]);
    rows.push(['… and 1,800 more with a token (refused)', mb(afterToken.heapUsed)]);

    await send(url, TRANSACTION_QUERY, token, { txRef: 'NT-VICTIM1' });
    rows.push([
      'Victim median, alone (10 s)',
      `${(await victim(url, token, 10_000)).toFixed(1)} ms`,
    ]);
    const [underAnonymous] = await Promise.all([
      victim(url, token, 10_000),
      attackers(url, null, 10_000),
    ]);
    rows.push([
      'Victim median, 4 clients without token × 5/s × 200-fragment chain',
      `${underAnonymous.toFixed(1)} ms`,
    ]);
    const [underToken] = await Promise.all([
      victim(url, token, 10_000),
      attackers(url, token, 10_000),
    ]);
    rows.push(['… the same clients with a token', `${underToken.toFixed(1)} ms`]);

    await resetStub(stub.port);
    const aliases = Array.from(
      { length: 20 },
      (_, a) =>
        `t${a}: transactions(txRefs: [${Array.from({ length: 100 }, (_, r) => `"NT-FAN${a}X${r}"`).join(', ')}]) { txRef }`,
    ).join(' ');
    const fanOut = await send(url, `{ ${aliases} }`, token);
    const calls = await settleStub(stub.port);
    rows.push([
      'Upstream calls of one request of 20 aliases × 100 references',
      `${calls.payment + calls.kyc} (HTTP ${fanOut.status})`,
    ]);
  } finally {
    await gateway.stop();
    await stub.stop();
  }
  console.log('| Measure | Value |\n| --- | -: |');
  for (const [what, value] of rows) console.log(`| ${what} | ${value} |`);
}

main().catch((error: unknown) => {
  console.error(error);
  stopAllNow();
  process.exit(1);
});
