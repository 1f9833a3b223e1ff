/**
 * Figures of the transports' resource bounds, measured on a gateway in this process against the
 * sandbox (loopback only): heap after 20,000 graphql-sse reservation attempts from one caller,
 * WebSockets one caller can hold, and the time to the first multipart part of a PENDING watch.
 *
 *   npm exec -- node --expose-gc scripts/transport-figures.ts
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { startSandbox } from '../sandbox/index.ts';
import { createApp } from '../src/app.ts';
import { signToken } from '../src/auth.ts';
import { loadConfig } from '../src/config.ts';

const SECRET = 'figures-secret-that-is-long-enough-for-hs256!';
const gc = (globalThis as { gc?: () => void }).gc;
const heapMb = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

const sandbox = await startSandbox({ pendingSeconds: 60 });
const config = loadConfig({
  AUTH_JWT_SECRET: SECRET,
  PAYMENT_API_URL: sandbox.paymentUrl,
  PAYMENT_ACCESS_TOKEN: sandbox.credentials.paymentAccessToken,
  KYC_API_URL: sandbox.kycUrl,
  KYC_SECRET_KEY: sandbox.credentials.kycSecretKey,
  KYC_PUBLIC_KEY: sandbox.credentials.kycPublicKey,
  KYC_BUSINESS_SLUG: sandbox.credentials.kycBusinessSlug,
  KYC_SDK_SCRIPT_URL: sandbox.sdkScriptUrl,
  RATE_LIMIT_RPS: '0',
  SERVICE_RATE_LIMIT_RPS: '0',
  LOG_LEVEL: 'silent',
});
if (!config.payment || !config.kyc || !config.auth) throw new Error('config incomplete');
const gateway = createApp({ config, payment: config.payment, kyc: config.kyc, auth: config.auth });
const server = gateway.createServer();
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const token = await signToken(SECRET, { sub: 'usr_figures', txRefs: [] }, '10m');
const service = await signToken(SECRET, { sub: 'svc_figures', scope: 'transactions:read' }, '10m');

// 1. 20,000 reservation attempts from one caller, twice: the second round shows whether the
// heap keeps growing (the first also warms the client and the server up).
const reserveMany = async () => {
  const statuses = new Map<number, number>();
  for (let batch = 0; batch < 400; batch += 1) {
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`${url}/graphql`, { method: 'PUT', headers: { authorization: `Bearer ${token}` } }),
      ),
    );
    for (const answer of answers) {
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      await answer.text();
    }
  }
  return JSON.stringify(Object.fromEntries(statuses));
};
const before = heapMb();
const first = await reserveMany();
const afterFirst = heapMb();
const second = await reserveMany();
const afterSecond = heapMb();
console.log(
  `20,000 reservation attempts from one caller: ${first}; heap ${before.toFixed(1)} MB -> ${afterFirst.toFixed(1)} MB; another 20,000: ${second}; heap ${afterSecond.toFixed(1)} MB; slots held: ${gateway.connections.held('sub:usr_figures')}`,
);

// 2. WebSockets one caller can hold (another caller, so the reservations above do not count).
const other = await signToken(SECRET, { sub: 'usr_sockets', txRefs: [] }, '10m');
const outcomes = await Promise.all(
  Array.from(
    { length: 200 },
    () =>
      new Promise<string>((resolve) => {
        const socket = new WebSocket(
          `${url.replace('http', 'ws')}/graphql`,
          'graphql-transport-ws',
        );
        socket.on('open', () =>
          socket.send(
            JSON.stringify({
              type: 'connection_init',
              payload: { authorization: `Bearer ${other}` },
            }),
          ),
        );
        socket.on('message', () => resolve('acknowledged'));
        socket.on('close', (code) => resolve(`closed ${code}`));
      }),
  ),
);
const counted = new Map<string, number>();
for (const outcome of outcomes) counted.set(outcome, (counted.get(outcome) ?? 0) + 1);
console.log(
  `200 WebSockets from one caller: ${JSON.stringify(Object.fromEntries(counted))}; slots held: ${gateway.connections.held('sub:usr_sockets')}`,
);

// 3. Time to the first multipart part of a PENDING watch (default settings).
const times: number[] = [];
for (let i = 0; i < 5; i += 1) {
  const started = performance.now();
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${service}`,
      'content-type': 'application/json',
      accept: 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json',
    },
    body: JSON.stringify({
      query: `subscription { transactionStatus(txRef: "NT-PENDING${Date.now()}${i}") { status } }`,
    }),
  });
  const reader = response.body?.getReader();
  let text = '';
  while (!text.includes('PENDING')) {
    const chunk = await reader?.read();
    if (!chunk || chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
  }
  times.push(performance.now() - started);
  await reader?.cancel();
}
console.log(
  `first multipart part of a PENDING watch: ${times.map((t) => `${t.toFixed(0)} ms`).join(', ')}`,
);

server.closeAllConnections();
server.close();
await gateway.close();
await sandbox.close();
process.exit(0);
