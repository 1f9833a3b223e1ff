/**
 * The conformance matrix (every transport, the same guarantees): rows are
 * guarantees, columns are transports, and every cell asserts the same error code — and the same
 * HTTP status where the transport has one (the operation's POST in graphql-sse's single
 * connection mode, whose 202 stands for the others' 200), or the WebSocket's close code. A new
 * transport is a new entry in TRANSPORTS (test/helpers/transports.ts) and fails here until every
 * row passes.
 *
 * The operations go over the wire as each protocol speaks it (fetch, ws), so that what is
 * asserted is what a client receives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';
import {
  HAS_STATUS,
  type Operation,
  runOver,
  TRANSPORTS,
  type Transport,
  type WireResult,
} from '../helpers/transports.ts';

let sandbox: Sandbox;
/** Default settings. */
let open: TestGateway;
/** TRUSTED_DOCUMENTS=only. */
let trusted: TestGateway;
/** A low rate limit. */
let limited: TestGateway;
/** Production settings. */
let production: TestGateway;

beforeAll(async () => {
  sandbox = await startSandbox({ pendingSeconds: 60 });
  const upstreams = sandboxUpstreams(sandbox);
  [open, trusted, limited, production] = await Promise.all([
    startGateway(upstreams, { LIVE_POLL_MS: '200' }),
    startGateway(upstreams, { TRUSTED_DOCUMENTS: 'only' }),
    startGateway(upstreams, {
      RATE_LIMIT_RPS: '1',
      RATE_LIMIT_BURST: '1',
      SERVICE_RATE_LIMIT_RPS: '1',
      SERVICE_RATE_LIMIT_BURST: '1',
    }),
    startGateway(upstreams, { GATEWAY_PRODUCTION: 'true' }),
  ]);
});
afterAll(async () => {
  await Promise.all([open, trusted, limited, production].map((gateway) => gateway?.close()));
  await sandbox?.close();
});

const TX = 'query Tx($txRef: ID!) { transaction(txRef: $txRef) { txRef status } }';
const STATUS =
  'subscription Watch($txRef: ID!) { transactionStatus(txRef: $txRef) { txRef status } }';
/** 31 aliases: one more than LIMIT_ALIASES allows by default. */
const OVER_LIMIT = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }`;

/** Nothing internal in what a client receives (production). */
const INTERNAL = /"stack|stacktrace|\/work\/|\/src\/|\.ts:\d|"http"|"exception"|Did you mean/;

interface Row {
  guarantee: string;
  gateway: () => TestGateway;
  token: () => Promise<string | null>;
  /** The operation; a function of the transport where streams and single answers differ. */
  operation: (transport: Transport) => Operation;
  /** Work just before the cell (exhausting the caller's rate). */
  before?: (token: string | null) => Promise<void>;
  code: string | undefined;
  /** HTTP status on transports that have one. */
  status?: number;
  /** WebSocket close code, when the row closes the connection rather than answering. */
  close?: number;
  /** Further checks on the cell. */
  check?: (out: WireResult, transport: Transport) => void;
  maxResults?: number;
}

const ROWS: Row[] = [
  {
    guarantee: 'no token',
    gateway: () => open,
    token: async () => null,
    operation: () => ({ query: TX, variables: { txRef: 'NT-SUCCESS001' } }),
    code: 'UNAUTHENTICATED',
    status: 401,
    close: 4403,
  },
  {
    guarantee: 'an expired token',
    gateway: () => open,
    token: () => open.token({ expiresIn: Math.floor(Date.now() / 1000) - 10 }),
    operation: () => ({ query: TX, variables: { txRef: 'NT-SUCCESS001' } }),
    code: 'UNAUTHENTICATED',
    status: 401,
    close: 4403,
  },
  {
    guarantee: 'a missing scope',
    gateway: () => open,
    token: () => open.token({ scope: 'kyc:read', sub: 'svc-kyc-only' }),
    operation: () => ({ query: TX, variables: { txRef: 'NT-SUCCESS001' } }),
    code: 'FORBIDDEN',
    status: 200,
  },
  {
    guarantee: "an end user's foreign txRef",
    gateway: () => open,
    token: () => open.token({ scope: null, sub: 'usr_matrix', txRefs: ['NT-SUCCESS001'] }),
    operation: (transport) =>
      transport === 'POST' || transport === 'GET'
        ? { query: TX, variables: { txRef: 'NT-FAILED001' } }
        : { query: STATUS, variables: { txRef: 'NT-FAILED001' } },
    code: 'FORBIDDEN',
    status: 200,
  },
  {
    guarantee: 'an unknown document under TRUSTED_DOCUMENTS=only',
    gateway: () => trusted,
    token: () => trusted.token(),
    operation: () => ({ query: '{ transaction(txRef: "NT-SUCCESS001") { customer { email } } }' }),
    code: 'GRAPHQL_VALIDATION_FAILED',
    status: 400,
    check: (out) => expect(out.raw).not.toContain('@'),
  },
  {
    guarantee: 'a document over a limit (aliases)',
    gateway: () => open,
    token: () => open.token(),
    operation: () => ({ query: OVER_LIMIT }),
    code: 'GRAPHQL_VALIDATION_FAILED',
    status: 400,
  },
  {
    guarantee: 'an unknown operationName',
    gateway: () => open,
    token: () => open.token(),
    operation: () => ({ query: 'query A { __typename }', operationName: 'B' }),
    code: 'GRAPHQL_VALIDATION_FAILED',
    status: 400,
  },
  {
    guarantee: 'a syntax error',
    gateway: () => open,
    token: () => open.token(),
    operation: () => ({ query: '{ transaction(txRef: ' }),
    code: 'GRAPHQL_PARSE_FAILED',
    status: 400,
  },
  {
    guarantee: 'an upstream 500',
    gateway: () => open,
    token: () => open.token({ sub: 'svc-matrix-500' }),
    operation: (transport) =>
      transport === 'POST' || transport === 'GET'
        ? { query: TX, variables: { txRef: 'NT-ERROR500' } }
        : { query: STATUS, variables: { txRef: 'NT-ERROR500' } },
    code: 'UPSTREAM_UNAVAILABLE',
    status: 200,
  },
  {
    guarantee: 'the rate limit',
    gateway: () => limited,
    token: () => limited.token({ sub: 'svc-matrix-rate' }),
    before: async (token) => {
      // Exhaust the caller's bucket (burst 1), then the cell's first request is over the rate.
      for (let i = 0; i < 5; i += 1) {
        const answer = await fetch(`${limited.url}/graphql`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{"query":"{ __typename }"}',
        });
        await answer.body?.cancel();
        if (answer.status === 429) return;
      }
    },
    operation: () => ({ query: '{ __typename }' }),
    code: 'RATE_LIMITED',
    status: 429,
  },
  {
    guarantee: 'production masking (an unknown field, an unknown operation)',
    gateway: () => production,
    token: () => production.token(),
    operation: () => ({
      query: 'query A { transaction(txRef: "NT-SUCCESS001") { statu } }',
      operationName: 'A',
    }),
    code: 'GRAPHQL_VALIDATION_FAILED',
    status: 400,
  },
  {
    guarantee: 'production masking (a syntax error with an unknown operationName)',
    gateway: () => production,
    token: () => production.token(),
    operation: () => ({ query: 'query A { ', operationName: 'Nope' }),
    code: 'GRAPHQL_PARSE_FAILED',
    status: 400,
  },
  {
    guarantee: 'the first part of a PENDING watch long before the payment settles',
    gateway: () => open,
    token: () => open.token({ sub: 'svc-matrix-watch' }),
    operation: (transport) => {
      const txRef = `NT-PENDING${Date.now()}${transport.length}`;
      return transport === 'POST' || transport === 'GET'
        ? { query: TX, variables: { txRef } }
        : { query: STATUS, variables: { txRef } };
    },
    code: undefined,
    status: 200,
    maxResults: 1,
    check: (out) => {
      // The payment settles 60 s after the first read: a first part held back until then (or
      // until the stream ends) is the defect, whatever the machine's load.
      expect(out.firstResultMs).toBeLessThan(20_000);
      expect(JSON.stringify(out.results[0])).toContain('"status":"PENDING"');
    },
  },
];

describe.each(ROWS)('$guarantee', (row) => {
  it.each(TRANSPORTS)('over %s', async (transport) => {
    const token = await row.token();
    await row.before?.(token);
    const out = await runOver(transport, row.gateway().url, row.operation(transport), {
      token,
      timeoutMs: 4000,
      ...(row.maxResults !== undefined && { maxResults: row.maxResults }),
    });
    if (transport === 'WebSocket' && row.close !== undefined) {
      expect(out.close).toBe(row.close);
      expect(out.results).toEqual([]);
    } else {
      expect(out.codes).toEqual(row.code === undefined ? [] : [row.code]);
      if (transport === 'WebSocket') expect(out.close).toBeUndefined();
    }
    if (HAS_STATUS[transport] && row.status !== undefined) {
      const accepted = transport === 'SSE single' && row.status === 200 ? 202 : row.status;
      expect(out.status).toBe(accepted);
    }
    expect(out.raw).not.toMatch(INTERNAL);
    row.check?.(out, transport);
  });
});
