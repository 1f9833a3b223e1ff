/**
 * With CORS_ORIGINS set, what the gateway's browser clients send
 * passes the preflight (trace context, request ids, graphql-sse's token header, PUT and DELETE),
 * and CORS_ALLOWED_HEADERS adds headers; an `Upgrade` other than `websocket` (h2c) is served over
 * HTTP/1.1 as if it were absent.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
const ORIGIN = 'https://app.example';

beforeAll(async () => {
  sandbox = await startSandbox();
  gateway = await startGateway(sandboxUpstreams(sandbox), {
    CORS_ORIGINS: ORIGIN,
    CORS_ALLOWED_HEADERS: 'X-Tenant, x-client-version',
  });
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

const preflight = (origin: string, method: string, headers: string) =>
  fetch(`${gateway.url}/graphql`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': headers,
    },
  });

describe('CORS', () => {
  it.each([
    ['POST', 'authorization,content-type,traceparent,tracestate,x-request-id'],
    ['PUT', 'authorization'],
    ['POST', 'authorization,content-type,x-graphql-event-stream-token'],
    ['DELETE', 'authorization,x-graphql-event-stream-token'],
    ['GET', 'authorization,x-graphql-event-stream-token,accept'],
    ['POST', 'x-tenant,x-client-version'],
  ])('a preflight of %s with %s passes from an allowed origin', async (method, headers) => {
    const answer = await preflight(ORIGIN, method, headers);
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const methods = (answer.headers.get('access-control-allow-methods') ?? '').split(/,\s*/);
    expect(methods).toContain(method);
    const allowed = (answer.headers.get('access-control-allow-headers') ?? '').split(/,\s*/);
    for (const header of headers.split(',')) expect(allowed).toContain(header);
  });

  it('gives nothing to another origin', async () => {
    const answer = await preflight('https://evil.example', 'POST', 'authorization');
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a graphql-sse reservation and an event stream from an allowed origin', async () => {
    const token = await gateway.token();
    const reserved = await fetch(`${gateway.url}/graphql`, {
      method: 'PUT',
      headers: { origin: ORIGIN, authorization: `Bearer ${token}` },
    });
    expect(reserved.status).toBe(201);
    expect(reserved.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const stream = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: {
        origin: ORIGIN,
        authorization: `Bearer ${token}`,
        accept: 'text/event-stream',
        'content-type': 'application/json',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(await stream.text()).toContain('"__typename":"Query"');
  });
});

/** A request with `Upgrade: h2c`, as some HTTP clients send by default. */
function withH2cUpgrade(
  path: string,
  method: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method,
        headers: {
          connection: 'Upgrade, HTTP2-Settings',
          upgrade: 'h2c',
          'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA',
          ...(body !== undefined && { 'content-length': Buffer.byteLength(body) }),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    outgoing.on('upgrade', (res) => resolve({ status: res.statusCode ?? 0, body: 'upgraded' }));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

describe('Upgrade: h2c', () => {
  it('is ignored on /healthz', async () => {
    expect(await withH2cUpgrade('/healthz', 'GET')).toEqual({ status: 200, body: 'ok\n' });
  });

  it('is ignored on POST /graphql', async () => {
    const answer = await withH2cUpgrade('/graphql', 'POST', '{"query":"{ __typename }"}', {
      authorization: `Bearer ${await gateway.token()}`,
      'content-type': 'application/json',
    });
    expect(answer).toEqual({ status: 200, body: '{"data":{"__typename":"Query"}}' });
  });
});
