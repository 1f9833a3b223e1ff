/**
 * A caller is its token, not the spelling of the header that carries it. A token without `sub`
 * (and without `jti`) sent as `Bearer  <token>`, `bearer <token>`, with a trailing space or tab,
 * or with its signature's spare base64url bits changed (the same signature bytes) is one caller
 * for every per-caller bound: the rate, CONNECTIONS_MAX_PER_CALLER (graphql-sse reservations and
 * WebSockets), LIVE_MAX_PER_CALLER, persisted-query registrations and the operation-label slots.
 */
import { createHash } from 'node:crypto';
import { type Client, createClient, type ExecutionResult } from 'graphql-sse';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
/** A service token without `sub` or `jti` (no rate: SERVICE_RATE_LIMIT_RPS is 0 here). */
let service: string;
/** An end user's token without `sub` or `jti` (the end users' rate applies). */
let endUser: string;
const clients: Client[] = [];
const sockets: WebSocket[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ pendingSeconds: 60 });
  gateway = await startGateway(sandboxUpstreams(sandbox), {
    RATE_LIMIT_RPS: '10',
    RATE_LIMIT_BURST: '60',
    SERVICE_RATE_LIMIT_RPS: '0',
    CONNECTIONS_MAX_PER_CALLER: '5',
    LIVE_MAX_PER_CALLER: '2',
    LIVE_POLL_MS: '1000',
    PERSISTED_REGISTRATIONS_PER_MINUTE: '3',
  });
  service = await gateway.token({ sub: null });
  endUser = await gateway.token({ sub: null, scope: null });
});
afterEach(() => {
  while (clients.length > 0) clients.pop()?.dispose();
  while (sockets.length > 0) sockets.pop()?.terminate();
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Spellings of one token: the header's own (`Bearer`'s case, the spaces around the token) and
 * the signature's (an HS256 signature is 32 bytes in 43 base64url characters: the last one has
 * two spare bits, which decode to the same bytes).
 */
function spellings(token: string): string[] {
  const last = ALPHABET.indexOf(token.at(-1) as string);
  const signatures = [0, 1, 2, 3].map(
    (bits) => `${token.slice(0, -1)}${ALPHABET[(last & ~3) | bits]}`,
  );
  const headers: string[] = [];
  for (const signature of signatures) {
    headers.push(
      `Bearer ${signature}`,
      `Bearer  ${signature}`,
      `bearer ${signature}`,
      `BEARER ${signature} `,
      `Bearer\t${signature}`,
    );
  }
  return headers;
}

/** `count` header values, cycling through the spellings of `token`. */
function respelled(token: string, count: number): string[] {
  const all = spellings(token);
  return Array.from({ length: count }, (_, i) => all[i % all.length] as string);
}

const post = (authorization: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization, ...headers },
    body: JSON.stringify(body),
  });

it('every spelling is accepted as the same token', async () => {
  for (const authorization of spellings(service)) {
    const response = await post(authorization, { query: '{ gatewayInfo { version } }' });
    expect(response.status, authorization).toBe(200);
  }
});

describe('respelled headers share one bucket', () => {
  it('the rate: 200 requests of an end user, at most its burst and what refills', async () => {
    const started = Date.now();
    const statuses = await Promise.all(
      respelled(endUser, 200).map(async (authorization) => {
        const response = await post(authorization, { query: '{ gatewayInfo { version } }' });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const allowed = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    // Burst 60, then 10 a second.
    expect(allowed).toBeLessThanOrEqual(60 + Math.ceil(10 * seconds) + 1);
    expect(allowed).toBeGreaterThanOrEqual(60);
  });

  it('CONNECTIONS_MAX_PER_CALLER: 25 reservations and 30 WebSockets hold 5', async () => {
    const reservations = await Promise.all(
      respelled(service, 25).map(async (authorization) => {
        const response = await fetch(`${gateway.url}/graphql`, {
          method: 'PUT',
          headers: { authorization },
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const reserved = reservations.filter((status) => status === 201).length;
    expect(reservations.filter((status) => status !== 201 && status !== 429)).toEqual([]);
    expect(reserved).toBe(5);
    const outcomes = await Promise.all(
      respelled(service, 30).map(
        (authorization) =>
          new Promise<'ack' | number>((resolve) => {
            const socket = new WebSocket(
              `${gateway.url.replace(/^http/, 'ws')}/graphql`,
              'graphql-transport-ws',
            );
            sockets.push(socket);
            socket.on('open', () =>
              socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization } })),
            );
            socket.on('message', (data) => {
              if (JSON.parse(String(data)).type === 'connection_ack') resolve('ack');
            });
            socket.on('close', (code) => resolve(code));
          }),
      ),
    );
    // The five reservations hold every slot: no WebSocket is let in.
    expect(outcomes.filter((outcome) => outcome === 'ack')).toEqual([]);
    expect(new Set(outcomes)).toEqual(new Set([4429]));
  });

  it('LIVE_MAX_PER_CALLER: of 6 subscriptions, 2 are live and the rest RATE_LIMITED', async () => {
    const firsts = respelled(service, 6).map((authorization, i) => {
      const client = createClient({
        url: `${gateway.url}/graphql`,
        retryAttempts: 0,
        headers: { authorization },
      });
      clients.push(client);
      return new Promise<{ result?: ExecutionResult; error?: unknown }>((resolve) => {
        client.subscribe(
          {
            query: 'subscription($txRef: ID!) { transactionStatus(txRef: $txRef) { status } }',
            variables: { txRef: `NT-PENDINGSPELL${i}` },
          },
          {
            next: (result) => resolve({ result: result as ExecutionResult }),
            error: (error) => resolve({ error }),
            complete: () => resolve({}),
          },
        );
      });
    });
    const outcomes = await Promise.all(firsts);
    const live = outcomes.filter((outcome) => outcome.result?.data);
    expect(live).toHaveLength(2);
    for (const outcome of outcomes.filter((outcome) => !outcome.result?.data)) {
      expect(JSON.stringify(outcome)).toContain('RATE_LIMITED');
    }
  });

  it('persisted-query registrations: 3 a minute, however the header is spelled', async () => {
    const spelled = respelled(service, 10);
    const documents = spelled.map((_, i) => `query Spelled${i} { gatewayInfo { version } }`);
    for (const [i, authorization] of spelled.entries()) {
      const query = documents[i] as string;
      const sha256Hash = createHash('sha256').update(query).digest('hex');
      const response = await post(authorization, {
        query,
        extensions: { persistedQuery: { version: 1, sha256Hash } },
      });
      expect(response.status).toBe(200);
    }
    let stored = 0;
    for (const query of documents) {
      const sha256Hash = createHash('sha256').update(query).digest('hex');
      const response = await post(`Bearer ${service}`, {
        extensions: { persistedQuery: { version: 1, sha256Hash } },
      });
      const body = (await response.json()) as { data?: unknown };
      if (body.data) stored += 1;
    }
    expect(stored).toBe(3);
  });

  it('operation labels: one caller respelling its header takes no label slot', async () => {
    const other = () => metric(gateway, 'gateway_graphql_requests_total', { operation: 'other' });
    const otherBefore = await other();
    for (let n = 0; n < 5; n += 1) {
      for (const authorization of respelled(service, 6)) {
        const response = await post(authorization, {
          query: `query SpelledLabel${n} { gatewayInfo { version } }`,
        });
        expect(response.status).toBe(200);
      }
    }
    for (let n = 0; n < 5; n += 1) {
      expect(
        await metric(gateway, 'gateway_graphql_requests_total', {
          operation: `SpelledLabel${n}`,
        }),
      ).toBe(0);
    }
    expect((await other()) - otherBefore).toBe(30);
  });
});
