/**
 * One host cannot hold the process's sockets by opening connections and sending nothing:
 * `MAX_IDLE_SOCKETS_PER_ADDRESS` idle sockets per remote address, one more closes that address's
 * oldest idle one; other addresses' sockets, and the host's new requests, are served.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import { startSandboxGateway, type TestGateway } from '../helpers/gateway.ts';

let gateway: TestGateway;
let token: string;
let close: () => Promise<void>;
const opened: Socket[] = [];

beforeAll(async () => {
  ({ gateway, token, close } = await startSandboxGateway({ MAX_IDLE_SOCKETS_PER_ADDRESS: '10' }));
});
afterAll(async () => {
  for (const socket of opened) socket.destroy();
  await close();
});

/** Opens `count` connections from `localAddress` that send nothing; counts those closed. */
async function idleSockets(count: number, localAddress: string) {
  const { port } = new URL(gateway.url);
  const state = { closed: 0 };
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress });
          opened.push(socket);
          socket.on('error', () => {});
          socket.once('connect', () => resolve());
          socket.once('close', () => {
            state.closed += 1;
            resolve();
          });
        }),
    ),
  );
  return state;
}

it('keeps at most MAX_IDLE_SOCKETS_PER_ADDRESS idle sockets of one address, and serves it and others', async () => {
  const other = await idleSockets(5, '127.0.0.2');
  const host = await idleSockets(50, '127.0.0.1');
  await until(() => host.closed >= 40, 10_000);
  // The other address keeps its sockets.
  expect(other.closed).toBe(0);
  // The host's new request is served: its connection takes the place of an old idle one.
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ gatewayInfo { version } }' }),
  });
  expect(response.status).toBe(200);
  await until(() => host.closed >= 41, 10_000);
  expect(other.closed).toBe(0);
});
