/**
 * OpenTelemetry as an operator configures it: real gateway processes (`node src/main.ts`) with
 * the standard `OTEL_*` variables, exporting to an OTLP/HTTP receiver on 127.0.0.1 that decodes
 * both `http/json` and `http/protobuf`. Each variable is honoured by the SDK itself; span names and
 * attributes follow the HTTP and GraphQL semantic conventions; a failed request's span is ERROR;
 * no span holds a credential or personal data.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, kycBody, startFixture, transactionBody } from '../helpers/fixture.ts';
import { KYC_SECRET, PAYMENT_TOKEN, TEST_JWT_SECRET } from '../helpers/gateway.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp.ts';
import {
  type GatewayProcess,
  query,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';

let receiver: OtlpReceiver;
let payment: Fixture;
let kyc: Fixture;
const flaky = new Set<string>();

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  payment = await startFixture((request) => {
    const txRef = request.path.split('/').at(-1) ?? '';
    if (txRef === 'NT-DOWN') return { status: 503 };
    // Down once, then answers: the second call is a resend.
    if (txRef.startsWith('NT-FLAKY') && !flaky.has(txRef)) {
      flaky.add(txRef);
      return { status: 503 };
    }
    return {
      body: transactionBody({
        customer: { fullname: 'Ada Secret', email: 'ada@private.example', phone: '2348000000001' },
      }),
    };
  });
  kyc = await startFixture((request) => ({
    body: kycBody({ userRef: request.query.get('userRef'), name: 'Kyc Private Name' }),
  }));
});
afterAll(async () => {
  await stopAllGateways();
  await receiver.close();
  await payment.close();
  await kyc.close();
});

const upstreams = () => ({ paymentUrl: payment.url, kycUrl: kyc.url });

/** Sends `document` with a caller's trace, then stops the gateway (which flushes its spans). */
async function traced(
  gateway: GatewayProcess,
  document: string,
  traceId: string,
  extra: Record<string, string> = {},
): Promise<{ errors?: unknown[] }> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${await testToken()}`,
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      ...extra,
    },
    body: JSON.stringify({ query: document }),
  });
  return (await response.json()) as { errors?: unknown[] };
}

const ofTrace = (traceId: string): ReceivedSpan[] =>
  receiver.spans().filter((span) => span.traceId === traceId);

it('http/json: SDK resource, headers and propagators; conventional spans; nothing secret', async () => {
  const gateway = await spawnGateway(upstreams(), {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'gateway-under-test',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,team=payments',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-tenant=acme',
    LOG_LEVEL: 'info',
  });
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const answer = await traced(
    gateway,
    'query Traced { transaction(txRef: "NT-TRACE1") { status customer { email phone fullName } } kycUser(userRef: "usr_secret_ref") { name } }',
    traceId,
    { 'x-request-id': 'req-traced-1' },
  );
  expect(answer.errors).toBeUndefined();
  expect(await gateway.stop()).toBe(0);

  const json = receiver.exports.filter((item) => item.contentType.startsWith('application/json'));
  expect(json.length).toBeGreaterThan(0);
  for (const item of json) expect(item.headers['x-collector-tenant']).toBe('acme');

  const spans = ofTrace(traceId);
  const server = spans.find((span) => span.kind === 2);
  expect(server?.name).toBe('POST /graphql');
  expect(server?.parentSpanId).toBe('00f067aa0ba902b7');
  expect(server?.attributes).toMatchObject({
    'http.request.method': 'POST',
    'http.route': '/graphql',
    'url.path': '/graphql',
    'url.scheme': 'http',
    'server.address': '127.0.0.1',
    'http.response.status_code': 200,
    'graphql.operation.type': 'query',
    'graphql.operation.name': 'Traced',
  });
  expect(server?.statusCode).toBe(0);
  expect(server?.resource).toMatchObject({
    'service.name': 'gateway-under-test',
    'deployment.environment.name': 'staging',
    team: 'payments',
  });

  const operation = spans.find((span) => span.kind === 1);
  expect(operation?.name).toBe('query Traced');
  expect(operation?.parentSpanId).toBe(server?.spanId);
  expect(operation?.attributes).toMatchObject({
    'graphql.operation.type': 'query',
    'graphql.operation.name': 'Traced',
  });

  const clients = spans.filter((span) => span.kind === 3);
  expect(clients.map((span) => span.name)).toEqual(['GET', 'GET']);
  for (const span of clients) {
    expect(span.parentSpanId).toBe(operation?.spanId);
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
    });
    expect(typeof span.attributes['server.port']).toBe('number');
    expect(span.attributes['http.request.resend_count']).toBeUndefined();
  }
  const urls = clients.map((span) => String(span.attributes['url.full'])).sort();
  expect(urls).toEqual(
    [
      `${kyc.url}/api/v1/user/kyc?userRef=REDACTED&slug=REDACTED`,
      `${payment.url}/pg/api/v1/transaction/status/NT-TRACE1`,
    ].sort(),
  );

  // The trace and the request id went upstream; the log line names the trace.
  const seen = payment.requests.at(-1)?.headers;
  expect(String(seen?.traceparent)).toMatch(new RegExp(`^00-${traceId}-`));
  expect(seen?.['x-request-id']).toBe('req-traced-1');
  expect(gateway.output()).toContain(`"traceId":"${traceId}"`);

  const everything = JSON.stringify(spans);
  for (const secret of [
    PAYMENT_TOKEN,
    KYC_SECRET,
    TEST_JWT_SECRET,
    'ada@private.example',
    '2348000000001',
    'Ada Secret',
    'Kyc Private Name',
    'usr_secret_ref',
  ]) {
    expect(everything).not.toContain(secret);
  }
});

it('http/protobuf by default: default service name, ERROR on UPSTREAM_UNAVAILABLE, resends', async () => {
  const gateway = await spawnGateway(upstreams(), {
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
  });
  const failed = '0af7651916cd43dd8448eb211c80319c';
  const answer = await traced(
    gateway,
    'query Down { transaction(txRef: "NT-DOWN") { status } }',
    failed,
  );
  expect(JSON.stringify(answer.errors)).toContain('UPSTREAM_UNAVAILABLE');
  const resent = '1af7651916cd43dd8448eb211c80319c';
  await traced(gateway, '{ transaction(txRef: "NT-FLAKY1") { status } }', resent);
  expect(await gateway.stop()).toBe(0);

  expect(
    receiver.exports.some((item) => item.contentType.startsWith('application/x-protobuf')),
  ).toBe(true);
  const spans = ofTrace(failed);
  const server = spans.find((span) => span.kind === 2);
  expect(server?.resource['service.name']).toBe('payment-kyc-gateway');
  expect(server?.attributes['http.response.status_code']).toBe(200);
  expect(server?.attributes['error.type']).toBe('UPSTREAM_UNAVAILABLE');
  expect(server?.statusCode).toBe(2);
  expect(spans.find((span) => span.kind === 1)?.name).toBe('query Down');
  const calls = spans.filter((span) => span.kind === 3);
  expect(calls.length).toBeGreaterThan(1);
  for (const span of calls) {
    expect(span.attributes['http.response.status_code']).toBe(503);
    expect(span.statusCode).toBe(2);
  }

  const retried = ofTrace(resent).filter((span) => span.kind === 3);
  expect(retried.map((span) => span.attributes['http.request.resend_count'])).toEqual([
    undefined,
    1,
  ]);
  expect(ofTrace(resent).find((span) => span.kind === 1)?.name).toBe('query');
});

it('OTEL_SDK_DISABLED=true: nothing exported and no trace header upstream', async () => {
  const before = receiver.exports.length;
  const gateway = await spawnGateway(upstreams(), {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SDK_DISABLED: 'true',
  });
  await query(gateway, '{ transaction(txRef: "NT-TRACE2") { status } }', await testToken());
  expect(await gateway.stop()).toBe(0);
  expect(receiver.exports.length).toBe(before);
  expect(payment.requests.at(-1)?.headers.traceparent).toBeUndefined();
});

it('exports nothing without an endpoint, yet sends x-request-id upstream', async () => {
  const before = receiver.exports.length;
  const gateway = await spawnGateway(upstreams(), {});
  await query(gateway, '{ transaction(txRef: "NT-TRACE3") { status } }', await testToken());
  expect(await gateway.stop()).toBe(0);
  expect(receiver.exports.length).toBe(before);
  const seen = payment.requests.at(-1)?.headers;
  expect(seen?.traceparent).toBeUndefined();
  expect(seen?.['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
});

it('OTEL_TRACES_SAMPLER=always_off exports nothing; OTEL_PROPAGATORS=b3 sends b3 upstream', async () => {
  const before = receiver.exports.length;
  const gateway = await spawnGateway(upstreams(), {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_TRACES_SAMPLER: 'always_off',
    OTEL_PROPAGATORS: 'b3',
  });
  await query(gateway, '{ transaction(txRef: "NT-TRACE4") { status } }', await testToken());
  expect(await gateway.stop()).toBe(0);
  expect(receiver.exports.slice(before).flatMap((item) => item.spans)).toEqual([]);
  const seen = payment.requests.at(-1)?.headers;
  expect(seen?.traceparent).toBeUndefined();
  // b3 single header: {traceId}-{spanId}-{sampled}; not sampled here.
  expect(String(seen?.b3)).toMatch(/^[0-9a-f]{32}-[0-9a-f]{16}-0$/);
});

it('OTEL_TRACES_SAMPLER=traceidratio with OTEL_TRACES_SAMPLER_ARG keeps traces by their id', async () => {
  const gateway = await spawnGateway(upstreams(), {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_TRACES_SAMPLER: 'traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.5',
  });
  // The SDK's ratio sampler keeps a trace when the XOR of its id's four 32-bit words is below
  // ratio × 2^32: 1 is, 0xffffffff is not.
  const kept = '00000000000000000000000000000001';
  const dropped = 'ffffffff000000000000000000000000';
  await traced(gateway, '{ transaction(txRef: "NT-TRACE5") { status } }', kept);
  await traced(gateway, '{ transaction(txRef: "NT-TRACE6") { status } }', dropped);
  expect(await gateway.stop()).toBe(0);
  expect(
    ofTrace(kept)
      .map((span) => span.kind)
      .sort(),
  ).toEqual([1, 2, 3]);
  expect(ofTrace(dropped)).toEqual([]);
});
