/**
 * The gateway as an Apollo Federation v2 subgraph, end to end over real HTTP on loopback: its
 * `_service` SDL and a second subgraph (a tiny orders service, graphql-yoga + @apollo/subgraph,
 * that extends `Transaction` with `order`) composed by @theguild/federation-composition, served
 * by Hive Gateway (@graphql-hive/gateway-runtime) forwarding the client's Authorization header.
 * Then `_entities` alone, under the rules of `transaction` and `kycUser`.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { type JWTPayload, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBalancer } from '../helpers/balancer.ts';
import { until } from '../helpers/eventually.ts';
import {
  codesOf,
  type GraphQLResponse,
  gql,
  type SandboxGateway,
  sandboxUpstreams,
  startGateway,
  startSandboxGateway,
  TEST_JWT_SECRET,
  type TestGateway,
} from '../helpers/gateway.ts';

/** The orders service: each order names its payment, and `Transaction` gains `order`. */
const ORDERS_SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])

  type Query {
    orders: [Order!]!
  }

  type Order @key(fields: "id") {
    id: ID!
    total: String!
    payment: Transaction
  }

  type Transaction @key(fields: "txRef") {
    txRef: ID!
    order: Order
  }
`;

const ORDERS = [
  { id: 'ORD-1', total: '15000.50', txRef: 'NT-SUCCESS001' },
  { id: 'ORD-2', total: '2500.00', txRef: 'NT-FAILED001' },
];

type Order = (typeof ORDERS)[number];

function startOrders(): Promise<{ url: string; server: Server; calls: string[] }> {
  const calls: string[] = [];
  const schema = buildSubgraphSchema([
    {
      typeDefs: parse(ORDERS_SDL),
      resolvers: {
        Query: { orders: () => ORDERS },
        Order: {
          __resolveReference: (ref: { id: string }) => ORDERS.find((o) => o.id === ref.id),
          payment: (order: Order) => ({ __typename: 'Transaction', txRef: order.txRef }),
        },
        Transaction: {
          __resolveReference: (ref: { txRef: string }) => ref,
          order: (tx: { txRef: string }) => ORDERS.find((o) => o.txRef === tx.txRef) ?? null,
        },
      },
    },
  ]);
  const yoga = createYoga({
    schema,
    logging: false,
    plugins: [{ onParams: ({ params }) => void calls.push(params.query ?? '') }],
  });
  return listen(createServer(yoga)).then(({ url, server }) => ({ url, server, calls }));
}

async function listen(server: Server): Promise<{ url: string; server: Server }> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, server };
}

let setup: SandboxGateway;
let orders: Awaited<ReturnType<typeof startOrders>>;
let hive: GatewayRuntime;
let hiveServer: Server;
let hiveUrl: string;
let supergraphSdl: string;

beforeAll(async () => {
  setup = await startSandboxGateway();
  orders = await startOrders();
  // What `rover subgraph introspect` or a schema registry does: the subgraph's SDL from
  // `_service`, asked with a service's token.
  const service = await gql<{ _service: { sdl: string } }, Record<string, never>>(
    setup.gateway,
    '{ _service { sdl } }',
    {},
    await setup.gateway.token({ scope: 'schema:read' }),
  );
  const sdl = service.data?._service.sdl ?? '';
  const composed = composeServices([
    { name: 'payments', typeDefs: parse(sdl), url: `${setup.gateway.url}/graphql` },
    { name: 'orders', typeDefs: parse(ORDERS_SDL), url: orders.url },
  ]);
  if (composed.errors) throw new Error(composed.errors.map((e) => e.message).join('\n'));
  supergraphSdl = composed.supergraphSdl;
  hive = createGatewayRuntime({
    supergraph: supergraphSdl,
    logging: false,
    // The router passes each client's own token on to the subgraphs.
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => ({
        authorization: request.headers.get('authorization'),
      }),
    },
  });
  ({ url: hiveUrl, server: hiveServer } = await listen(createServer(hive)));
});

afterAll(async () => {
  hiveServer?.closeAllConnections();
  hiveServer?.close();
  await hive?.dispose();
  orders?.server.closeAllConnections();
  orders?.server.close();
  await setup?.close();
});

/**
 * Subscribes to `transactionStatus` through a router at `url` (graphql-sse, distinct connections)
 * and resolves to the data of its first `next` event, or the text it ended with.
 */
async function firstStatus(url: string, txRef: string): Promise<unknown> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${setup.token}`,
    },
    body: JSON.stringify({
      query: `subscription { transactionStatus(txRef: "${txRef}") { txRef status order { id } } }`,
    }),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!/event: next\ndata: .*\n\n/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  const data = /event: next\ndata: (.*)\n\n/.exec(text)?.[1];
  return data === undefined ? text : JSON.parse(data);
}

/** A query to Hive Gateway, with a bearer token. */
async function viaHive(query: string, token: string): Promise<GraphQLResponse<unknown>> {
  return gql({ url: hiveUrl.replace(/\/graphql$/, '') }, query, {}, token);
}

describe('composed with an orders subgraph, served by Hive Gateway', () => {
  it('composes: the supergraph joins Transaction from both subgraphs by txRef', () => {
    expect(supergraphSdl).toMatch(/join__type\(graph: PAYMENTS, key: "txRef"\)/);
    expect(supergraphSdl).toMatch(/join__type\(graph: ORDERS, key: "txRef"\)/);
    expect(supergraphSdl).toMatch(/join__type\(graph: PAYMENTS, key: "userRef"\)/);
  });

  it('answers a query that starts at the gateway and continues in the orders service', async () => {
    const response = await viaHive(
      '{ transaction(txRef: "NT-SUCCESS001") { status amountMoney { amount } order { id total } } }',
      setup.token,
    );
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      transaction: {
        status: 'SUCCESSFUL',
        amountMoney: { amount: expect.any(String) },
        order: { id: 'ORD-1', total: '15000.50' },
      },
    });
  });

  it('delivers @defer in parts with deferStream: true (and refuses it without)', async () => {
    const query = '{ transaction(txRef: "NT-SUCCESS001") { status ... @defer { order { id } } } }';
    const ask = (url: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'multipart/mixed',
          authorization: `Bearer ${setup.token}`,
        },
        body: JSON.stringify({ query }),
      });
    const withoutParts = await ask(hiveUrl);
    expect(await withoutParts.text()).toMatch(/defer/i);
    const deferring = createGatewayRuntime({
      supergraph: supergraphSdl,
      logging: false,
      deferStream: true,
      propagateHeaders: {
        fromClientToSubgraphs: ({ request }) => ({
          authorization: request.headers.get('authorization'),
        }),
      },
    });
    const { url, server } = await listen(createServer(deferring));
    try {
      const response = await ask(url);
      expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
      const body = await response.text();
      expect(body).toContain('"transaction":{"status":"SUCCESSFUL"}');
      expect(body).toContain('"order":{"id":"ORD-1"}');
    } finally {
      server.closeAllConnections();
      server.close();
      await deferring.dispose();
    }
  });

  it('relays a transactionStatus subscription, which its default executor asks of the gateway over GET (graphql-sse)', async () => {
    const txRef = `NT-PENDING${Date.now()}HIVE`;
    expect(await firstStatus(hiveUrl, txRef)).toEqual({
      data: { transactionStatus: { txRef, status: 'PENDING', order: null } },
    });
    // The status came from the payment service, asked by the gateway for this subscription.
    const asked = setup.sandbox.requests.filter((request) => request.path.includes(txRef));
    expect(asked.length).toBeGreaterThan(0);
  });

  it("relays it over the gateway's WebSocket with its WS transport, the token in connectionParams", async () => {
    // The WebSocket goes through a balancer in front of the gateway, which counts what it hands
    // on: only the router's subscription traffic is sent there.
    const balancer = await startBalancer([setup.gateway.url], 200);
    await until(() => balancer.inRotation(setup.gateway.url), 10_000);
    const router = createGatewayRuntime({
      supergraph: supergraphSdl,
      logging: false,
      propagateHeaders: {
        fromClientToSubgraphs: ({ request }) => ({
          authorization: request.headers.get('authorization'),
        }),
      },
      transportEntries: {
        payments: {
          options: {
            subscriptions: {
              kind: 'ws',
              location: `${balancer.url}/graphql`,
              // The gateway reads the token from connection_init's payload.
              options: { connectionParams: { authorization: '{context.headers.authorization}' } },
            },
          },
        },
      },
    });
    const { url, server } = await listen(createServer(router));
    try {
      const txRef = `NT-PENDING${Date.now()}WS`;
      expect(await firstStatus(url, txRef)).toEqual({
        data: { transactionStatus: { txRef, status: 'PENDING', order: null } },
      });
      expect(balancer.served.get(new URL(setup.gateway.url).origin) ?? 0).toBeGreaterThan(0);
      expect(balancer.failures).toEqual([]);
    } finally {
      server.closeAllConnections();
      server.close();
      await router.dispose();
      await balancer.close();
    }
  });

  it("answers a query that starts at the orders service and reads each order's payment through _entities", async () => {
    const response = await viaHive(
      '{ orders { id payment { txRef status succeeded } } }',
      setup.token,
    );
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      orders: [
        { id: 'ORD-1', payment: { txRef: 'NT-SUCCESS001', status: 'SUCCESSFUL', succeeded: true } },
        { id: 'ORD-2', payment: { txRef: 'NT-FAILED001', status: 'FAILED', succeeded: false } },
      ],
    });
  });

  it("keeps an end user's token to its own payments: a foreign one is FORBIDDEN, with no upstream call", async () => {
    const endUser = await setup.gateway.token({
      sub: 'usr_demo_tier1',
      scope: null,
      txRefs: ['NT-SUCCESS001'],
    });
    const before = setup.sandbox.requests.length;
    const response = await viaHive('{ orders { id payment { txRef status } } }', endUser);
    const paymentCalls = setup.sandbox.requests
      .slice(before)
      .filter((request) => request.service === 'payment')
      .map((request) => request.path);
    expect(paymentCalls.some((path) => path.includes('NT-FAILED001'))).toBe(false);
    expect(codesOf(response)).toContain('FORBIDDEN');
    const data = response.data as {
      orders: Array<{ id: string; payment: { status: string } | null }>;
    } | null;
    expect(data?.orders[0]).toEqual({
      id: 'ORD-1',
      payment: { txRef: 'NT-SUCCESS001', status: 'SUCCESSFUL' },
    });
    expect(data?.orders[1]?.payment ?? null).toBeNull();
  });

  it("refuses the gateway's part of a request without a token (UNAUTHENTICATED)", async () => {
    const response = await gql(
      { url: hiveUrl.replace(/\/graphql$/, '') },
      '{ orders { id payment { status } } }',
      {},
      null,
    );
    // The orders service answers; the gateway's part is refused, by Hive Gateway per position.
    expect(new Set(codesOf(response))).toEqual(new Set(['UNAUTHENTICATED']));
    expect(response.data).toEqual({
      orders: [
        { id: 'ORD-1', payment: null },
        { id: 'ORD-2', payment: null },
      ],
    });
  });
});

// ---------------------------------------------------------------------------------------------
// `_entities` and `_service` asked directly, as a router asks them.

const ENTITIES = `query Entities($representations: [_Any!]!) {
  _entities(representations: $representations) {
    __typename
    ... on Transaction { txRef status }
    ... on KycUser { userRef level }
  }
}`;

function entities(
  gateway: Pick<TestGateway, 'url'>,
  representations: unknown[],
  token: string,
): Promise<GraphQLResponse<{ _entities: unknown[] }>> {
  return gql(gateway, ENTITIES, { representations }, token);
}

/** `[path, code]` of each error, in the order of their positions. */
function errorsAt(response: GraphQLResponse<unknown>): unknown[] {
  return (response.errors ?? [])
    .map((error) => [error.path, error.extensions?.code] as const)
    .sort(([a], [b]) => Number(a?.[1]) - Number(b?.[1]));
}

describe('_entities, entity by entity, under the rules of transaction and kycUser', () => {
  it('resolves each representation, and refuses a malformed one at its position only', async () => {
    const before = setup.sandbox.requests.length;
    const response = await entities(
      setup.gateway,
      [
        { __typename: 'Transaction', txRef: 'NT-SUCCESS001' },
        { __typename: 'Transaction', txRef: 'not-a-ref' },
        { __typename: 'KycUser', userRef: 'usr_demo_tier1' },
        { __typename: 'Transaction' },
        { __typename: 'Transaction', txRef: 42 },
        { __typename: 'Order', id: 'ORD-1' },
        'NT-SUCCESS001',
        { __typename: 'Transaction', txRef: 'NT-UNKNOWN1' },
      ],
      setup.token,
    );
    expect(response.status).toBe(200);
    expect(response.data?._entities).toEqual([
      { __typename: 'Transaction', txRef: 'NT-SUCCESS001', status: 'SUCCESSFUL' },
      null,
      { __typename: 'KycUser', userRef: 'usr_demo_tier1', level: 1 },
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(errorsAt(response)).toEqual([
      [['_entities', 1], 'BAD_USER_INPUT'],
      [['_entities', 3], 'BAD_USER_INPUT'],
      [['_entities', 4], 'BAD_USER_INPUT'],
      [['_entities', 5], 'BAD_USER_INPUT'],
      [['_entities', 6], 'BAD_USER_INPUT'],
    ]);
    // Only the well-formed references reached an upstream: no call for a malformed one.
    const paths = setup.sandbox.requests.slice(before).map((request) => request.path);
    expect(paths.some((path) => path.includes('not-a-ref'))).toBe(false);
  });

  it('holds an end user to the txRefs claim and its own sub, FORBIDDEN elsewhere with no upstream call', async () => {
    const endUser = await setup.gateway.token({
      sub: 'usr_demo_tier1',
      scope: null,
      txRefs: ['NT-SUCCESS001'],
    });
    const before = setup.sandbox.requests.length;
    const response = await entities(
      setup.gateway,
      [
        { __typename: 'Transaction', txRef: 'NT-SUCCESS001' },
        { __typename: 'Transaction', txRef: 'NT-FAILED001' },
        { __typename: 'KycUser', userRef: 'usr_demo_tier1' },
        { __typename: 'KycUser', userRef: 'usr_demo_tier3' },
      ],
      endUser,
    );
    expect(response.data?._entities).toEqual([
      { __typename: 'Transaction', txRef: 'NT-SUCCESS001', status: 'SUCCESSFUL' },
      null,
      { __typename: 'KycUser', userRef: 'usr_demo_tier1', level: 1 },
      null,
    ]);
    expect(errorsAt(response)).toEqual([
      [['_entities', 1], 'FORBIDDEN'],
      [['_entities', 3], 'FORBIDDEN'],
    ]);
    const paths = setup.sandbox.requests.slice(before).map((request) => request.path);
    expect(paths.some((path) => /NT-FAILED001|usr_demo_tier3/.test(path))).toBe(false);
  });

  it('a token with kyc:read only may read KYC entities, not transactions', async () => {
    const kycOnly = await setup.gateway.token({ scope: 'kyc:read' });
    const response = await entities(
      setup.gateway,
      [
        { __typename: 'KycUser', userRef: 'usr_demo_tier3' },
        { __typename: 'Transaction', txRef: 'NT-SUCCESS001' },
      ],
      kycOnly,
    );
    expect(response.data?._entities[0]).toMatchObject({ userRef: 'usr_demo_tier3' });
    expect(errorsAt(response)).toEqual([[['_entities', 1], 'FORBIDDEN']]);
  });

  it('counts representations against the cost limit, before any upstream call', async () => {
    const before = setup.sandbox.requests.length;
    const representations = Array.from({ length: 2000 }, (_, index) => ({
      __typename: 'Transaction',
      txRef: `NT-COST${index}`,
    }));
    const response = await entities(setup.gateway, representations, setup.token);
    expect(codesOf(response)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(response.data ?? null).toBeNull();
    expect(setup.sandbox.requests.length).toBe(before);
  });
});

it('with introspection on (development), gives the SDL to any valid token', async () => {
  const endUser = await setup.gateway.token({ sub: 'usr_demo_tier1', scope: null });
  const response = await gql<{ _service: { sdl: string } }, Record<string, never>>(
    setup.gateway,
    '{ _service { sdl } }',
    {},
    endUser,
  );
  expect(response.data?._service.sdl).toContain(
    '@link(url: "https://specs.apollo.dev/federation/v2.9"',
  );
});

describe('MAX_RECORDS_PER_REQUEST and _service', () => {
  let bounded: TestGateway;
  beforeAll(async () => {
    bounded = await startGateway(sandboxUpstreams(setup.sandbox), {
      MAX_RECORDS_PER_REQUEST: '2',
      INTROSPECTION: 'false',
    });
  });
  afterAll(() => bounded.close());

  it('reads at most MAX_RECORDS_PER_REQUEST distinct records; one more fails at its position', async () => {
    const before = setup.sandbox.requests.length;
    const response = await entities(
      bounded,
      [
        { __typename: 'Transaction', txRef: 'NT-SUCCESS001' },
        { __typename: 'Transaction', txRef: 'NT-SUCCESS001' },
        { __typename: 'KycUser', userRef: 'usr_demo_tier1' },
        { __typename: 'Transaction', txRef: 'NT-FAILED001' },
      ],
      await bounded.token(),
    );
    // Three distinct records asked, two read: the duplicate costs nothing, and the record past
    // the bound (whichever the loaders reach last) is BAD_USER_INPUT at its own position.
    const list = response.data?._entities ?? [];
    expect(list).toHaveLength(4);
    expect(list.filter((entity) => entity === null)).toHaveLength(1);
    expect(list[0]).toEqual(list[1]);
    const refused = list.indexOf(null);
    expect(refused).toBeGreaterThan(1);
    expect(errorsAt(response)).toEqual([[['_entities', refused], 'BAD_USER_INPUT']]);
    expect(setup.sandbox.requests.length - before).toBeLessThanOrEqual(2);
  });

  it('with introspection off, gives the SDL to a service token only', async () => {
    const service = await gql<{ _service: { sdl: string } }, Record<string, never>>(
      bounded,
      '{ _service { sdl } }',
      {},
      await bounded.token({ scope: 'schema:read' }),
    );
    expect(service.data?._service.sdl).toContain('type Transaction @key(fields: "txRef")');
    expect(service.data?._service.sdl).toContain('type KycUser @key(fields: "userRef")');

    const endUser = await gql(
      bounded,
      '{ _service { sdl } }',
      {},
      await bounded.token({ sub: 'usr_demo_tier1', scope: null }),
    );
    expect(codesOf(endUser)).toEqual(['FORBIDDEN']);
    expect(JSON.stringify(endUser)).not.toContain('@key');

    const noToken = await gql(bounded, '{ _service { sdl } }', {}, null);
    expect(noToken.status).toBe(401);
    // Introspection stays off whatever the token.
    const introspection = await gql(
      bounded,
      '{ __schema { types { name } } }',
      {},
      await bounded.token(),
    );
    expect(introspection.data ?? null).toBeNull();
    expect(new Set(codesOf(introspection))).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
  });
});

// ---------------------------------------------------------------------------------------------
// A router that enforces the SDL's scope rules itself (docs/federation.md, "Access rules at the
// router"): Hive Gateway with Generic Auth in the protect-granular mode, reading the
// `@authenticated` and `@requiresScopes` that composition carried from the gateway's SDL.

describe('a router enforcing the scope rules, the gateway the row rules', () => {
  let guarded: GatewayRuntime;
  let guardedServer: Server;
  let guardedUrl: string;
  /** The subgraph calls the router made, by subgraph URL. */
  const fetched: string[] = [];

  beforeAll(async () => {
    const secret = new TextEncoder().encode(TEST_JWT_SECRET);
    guarded = createGatewayRuntime({
      supergraph: supergraphSdl,
      logging: false,
      genericAuth: {
        mode: 'protect-granular',
        rejectUnauthenticated: false,
        // The router verifies the token as the gateway does (same secret), then reads its scopes.
        resolveUserFn: async (context) => {
          const header = context.request.headers.get('authorization') ?? '';
          const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
          if (!token) return null;
          try {
            return (await jwtVerify(token, secret, { algorithms: ['HS256'] })).payload;
          } catch {
            return null;
          }
        },
        extractScopes: (claims: JWTPayload) =>
          [claims.scope ?? []].flat().flatMap((scope) => String(scope).split(' ')),
      },
      propagateHeaders: {
        fromClientToSubgraphs: ({ request }) => ({
          authorization: request.headers.get('authorization'),
        }),
      },
      plugins: () => [{ onFetch: ({ url }) => void fetched.push(url) }],
    });
    ({ url: guardedUrl, server: guardedServer } = await listen(createServer(guarded)));
  });

  afterAll(async () => {
    guardedServer?.closeAllConnections();
    guardedServer?.close();
    await guarded?.dispose();
  });

  const viaGuarded = (query: string, token: string | null) =>
    gql({ url: guardedUrl.replace(/\/graphql$/, '') }, query, {}, token);
  const gatewayCalls = () => fetched.filter((url) => url.startsWith(setup.gateway.url)).length;

  it('the supergraph shows the scope rules', () => {
    expect(supergraphSdl).toMatch(
      /\n {2}verifyTransaction\([^)]*\): Transaction [^\n]*@requiresScopes\(scopes: \[\["transactions:read"\]\]\)/,
    );
    expect(supergraphSdl).toMatch(/\n {2}transaction\([^)]*\): Transaction [^\n]*@authenticated/);
  });

  it('refuses a scope-less token asking for verifyTransaction before calling the gateway', async () => {
    const endUser = await setup.gateway.token({
      sub: 'usr_demo_tier1',
      scope: null,
      txRefs: ['NT-SUCCESS001'],
    });
    const before = gatewayCalls();
    const response = await viaGuarded(
      'mutation { verifyTransaction(txRef: "NT-SUCCESS001") { status } }',
      endUser,
    );
    expect(response.errors?.length).toBeGreaterThan(0);
    expect(
      (response.data as { verifyTransaction?: unknown } | null)?.verifyTransaction ?? null,
    ).toBeNull();
    expect(gatewayCalls()).toBe(before);
    // A service token goes through.
    const allowed = await viaGuarded(
      'mutation { verifyTransaction(txRef: "NT-SUCCESS001") { status } }',
      setup.token,
    );
    expect(allowed.errors).toBeUndefined();
    expect(allowed.data).toEqual({ verifyTransaction: { status: 'SUCCESSFUL' } });
    expect(gatewayCalls()).toBe(before + 1);
  });

  it('lets an end user through to its own payment, and the gateway refuses another one (FORBIDDEN)', async () => {
    const endUser = await setup.gateway.token({
      sub: 'usr_demo_tier1',
      scope: null,
      txRefs: ['NT-SUCCESS001'],
    });
    const own = await viaGuarded('{ transaction(txRef: "NT-SUCCESS001") { status } }', endUser);
    expect(own.errors).toBeUndefined();
    expect(own.data).toEqual({ transaction: { status: 'SUCCESSFUL' } });
    const before = gatewayCalls();
    const foreign = await viaGuarded('{ transaction(txRef: "NT-FAILED001") { status } }', endUser);
    expect(gatewayCalls()).toBe(before + 1);
    expect(codesOf(foreign)).toEqual(['FORBIDDEN']);
    expect(foreign.data).toEqual({ transaction: null });
  });
});
