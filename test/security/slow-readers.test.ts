/**
 * A client that never reads its stream: the gateway must not keep what it cannot deliver. On the
 * transports that carry many operations on one stream (WebSocket, graphql-sse's single
 * connection) such a client is offered 250 MB of answers; heap + external memory stays within
 * 100 MB of where it started, the stream is ended and counted (`gateway_streams_ended_total`),
 * and the gateway answers others. A stream of one operation (graphql-sse's distinct connections,
 * multipart/mixed) is pulled no faster than it is read, and ended when its writes stall.
 */
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  type FieldNode,
  getIntrospectionQuery,
  type OperationDefinitionNode,
  parse,
  print,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { until } from '../helpers/eventually.ts';
import { startSandboxGateway, type TestGateway } from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';
import { stalledAnswer } from '../helpers/transports.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap and external memory of this process (the gateway runs in it), after full collections. */
function memory(): number {
  gc();
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

const MB = 1024 * 1024;
const OFFERED = 250 * MB;
const BOUND = 100 * MB;

let gateway: TestGateway;
let token: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ gateway, token, close } = await startSandboxGateway({
    INTROSPECTION: 'true',
    // Large answers from few operations: the whole schema, many times over.
    LIMIT_ALIASES: '1000',
    LIMIT_TOKENS: '1000000',
    LIMIT_DOCUMENT_BYTES: '1000000',
    LIMIT_DEPTH: '40',
    LIMIT_COST: '1000000',
    LIMIT_DIRECTIVES: '1000',
    LIMIT_ROOT_FIELDS: '100',
    // The tests do not wait 30 s for a stalled write.
    STREAM_WRITE_TIMEOUT_MS: '1000',
  }));
});
afterAll(() => close());

const introspection = parse(getIntrospectionQuery());
const schemaSelection = print(
  (
    (introspection.definitions[0] as OperationDefinitionNode).selectionSet
      .selections[0] as FieldNode
  ).selectionSet as NonNullable<FieldNode['selectionSet']>,
);
const fragments = introspection.definitions
  .slice(1)
  .map((definition) => print(definition))
  .join('\n');

/** A query whose answer is the schema `copies` times (about 60 kB a copy). */
function big(copies: number, directive = ''): string {
  const fields = Array.from({ length: copies }, (_, i) => `a${i}: __schema { ...S }`).join('\n');
  const selection = directive
    ? schemaSelection.replace(/\btypes\b/, `types ${directive}`)
    : schemaSelection;
  return `query Big {\n${fields}\n}\nfragment S on __Schema ${selection}\n${fragments}`;
}

const BIG = big(50);

/** One operation whose answer is streamed in parts: the schema's types, `copies` times. */
function bigStreamed(copies: number): string {
  const fields = Array.from(
    { length: copies },
    (_, i) => `t${i}: types @stream(initialCount: 0) { ...FullType }`,
  ).join('\n');
  return `query BigStreamed { __schema { ${fields} } }\n${fragments}`;
}

/** Bytes of one answer to `query`, read normally. */
async function answerBytes(query: string): Promise<number> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
  });
  expect(response.status).toBe(200);
  return (await response.arrayBuffer()).byteLength;
}

/** The gateway still answers a caller that reads. */
async function expectServing(): Promise<void> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ gatewayInfo { version } }' }),
  });
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ data: { gatewayInfo: {} } });
}

/** A raw request with this test's token whose answer is never read past its head. */
function stalledRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ socket: Socket; head: string }> {
  return stalledAnswer(
    gateway.url,
    method,
    path,
    { authorization: `Bearer ${token}`, ...headers },
    body,
  );
}

const ended = (transport: string) => metric(gateway, 'gateway_streams_ended_total', { transport });

describe('a client that never reads', () => {
  it('over WebSocket: closed (1008) past STREAM_MAX_BUFFERED_BYTES, memory bounded', async () => {
    const size = await answerBytes(BIG);
    const operations = Math.ceil(OFFERED / size);
    const before = memory();
    const endedBefore = await ended('websocket');
    // graphql-ws's own binding printed each failed write's stack to stderr: nothing is printed.
    const printed = vi.spyOn(console, 'error');
    const socket = new WebSocket(
      `${gateway.url.replace(/^http/, 'ws')}/graphql`,
      'graphql-transport-ws',
    );
    socket.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      socket.on('open', () =>
        socket.send(
          JSON.stringify({
            type: 'connection_init',
            payload: { authorization: `Bearer ${token}` },
          }),
        ),
      );
      socket.on('message', (data) => {
        if (JSON.parse(String(data)).type === 'connection_ack') resolve();
      });
      socket.on('close', () => reject(new Error('closed before connection_ack')));
    });
    // From here on nothing is read.
    socket.pause();
    for (let i = 0; i < operations; i += 1) {
      socket.send(JSON.stringify({ id: String(i), type: 'subscribe', payload: { query: BIG } }));
      if (i % 4 === 3) await sleep(50);
    }
    await until(async () => (await ended('websocket')) > endedBefore, 60_000);
    const after = memory();
    expect(after - before).toBeLessThan(BOUND);
    await expectServing();
    socket.terminate();
    await until(async () => (await metric(gateway, 'gateway_connection_slots')) === 0, 60_000);
    expect(printed).not.toHaveBeenCalled();
    printed.mockRestore();
  }, 120_000);

  it('over graphql-sse single connection: the reservation is dropped, memory bounded', async () => {
    const size = await answerBytes(BIG);
    const operations = Math.ceil(OFFERED / size);
    const before = memory();
    const endedBefore = await ended('sse');
    const reserved = await fetch(`${gateway.url}/graphql`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}` },
    });
    const streamToken = await reserved.text();
    const { socket, head } = await stalledRequest('GET', `/graphql?token=${streamToken}`, {
      accept: 'text/event-stream',
    });
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    const statuses: number[] = [];
    for (let i = 0; i < operations; i += 4) {
      await Promise.all(
        Array.from({ length: Math.min(4, operations - i) }, async (_, j) => {
          const response = await fetch(`${gateway.url}/graphql`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${token}`,
              'x-graphql-event-stream-token': streamToken,
            },
            body: JSON.stringify({ query: BIG, extensions: { operationId: `op${i + j}` } }),
          });
          statuses.push(response.status);
          await response.arrayBuffer();
        }),
      );
    }
    await until(async () => (await ended('sse')) > endedBefore, 60_000);
    const after = memory();
    expect(after - before).toBeLessThan(BOUND);
    // Once dropped, the token is unknown: the rest of the operations are refused.
    expect(statuses).toContain(404);
    await expectServing();
    socket.destroy();
  }, 120_000);

  for (const [name, accept, transport] of [
    ['graphql-sse distinct connections', 'text/event-stream', 'sse'],
    ['multipart/mixed', 'multipart/mixed', 'multipart'],
  ] as const) {
    it(`over ${name}: the stream is ended when its client stops reading, memory bounded`, async () => {
      // Three streams of about 8 MB each (the executor builds an answer whole before its parts are
      // pulled, so larger answers only cost time here).
      const connections = 3;
      const before = memory();
      const endedBefore = await ended(transport);
      const body = JSON.stringify({ query: bigStreamed(150) });
      const sockets: Socket[] = [];
      for (let i = 0; i < connections; i += 1) {
        const { socket, head } = await stalledRequest(
          'POST',
          '/graphql',
          { accept, 'content-type': 'application/json' },
          body,
        );
        expect(head).toMatch(/^HTTP\/1\.1 200 /);
        sockets.push(socket);
      }
      await until(async () => (await ended(transport)) >= endedBefore + connections, 60_000);
      const after = memory();
      expect(after - before).toBeLessThan(BOUND);
      await expectServing();
      for (const socket of sockets) socket.destroy();
    }, 120_000);
  }
});
