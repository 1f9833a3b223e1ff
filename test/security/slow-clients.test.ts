/**
 * Connections that hold the server: bodies announced but sent slowly, headers that never end.
 * Without a token the body is never waited for; with one, the request must arrive within
 * REQUEST_TIMEOUT_MS or the connection is closed.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandboxGateway, type TestGateway } from '../helpers/gateway.ts';

let gateway: TestGateway;
let token: string;

let close: () => Promise<void>;
beforeAll(async () => {
  ({ gateway, token, close } = await startSandboxGateway({ REQUEST_TIMEOUT_MS: '500' }));
});
afterAll(() => close());

interface Held {
  socket: Socket;
  /** What the server sent, and whether it closed the connection. */
  outcome: Promise<{ answer: string; closed: boolean }>;
}

/** Opens a connection, sends `head` (and no more), and collects the answer until close. */
function hold(head: string, waitMs: number): Held {
  const { port } = new URL(gateway.url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.write(head);
  const outcome = new Promise<{ answer: string; closed: boolean }>((resolve) => {
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ answer, closed: false });
    }, waitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, closed: true });
    });
    socket.on('error', () => {});
  });
  return { socket, outcome };
}

const postHead = (extra = '') =>
  'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
  `Content-Length: ${1024 * 1024 - 1}\r\n${extra}\r\n{"query":"{ gatewayInfo { version } }",`;

it('50 connections announcing a 1 MB body without a token get 401 at once and are closed', async () => {
  const held = Array.from({ length: 50 }, () => hold(postHead(), 5000));
  const outcomes = await Promise.all(held.map((h) => h.outcome));
  for (const { answer, closed } of outcomes) {
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toMatch(/UNAUTHENTICATED/);
    expect(closed).toBe(true);
  }
});

it('a body that does not arrive within REQUEST_TIMEOUT_MS closes the connection, token or not', async () => {
  const { answer, closed } = await hold(postHead(`Authorization: Bearer ${token}\r\n`), 5000)
    .outcome;
  expect(closed).toBe(true);
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
});

it('headers that never end close the connection', async () => {
  const { closed } = await hold('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1', 5000)
    .outcome;
  expect(closed).toBe(true);
});

it('serves normally afterwards', async () => {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ gatewayInfo { version } }' }),
  });
  expect(response.status).toBe(200);
});
