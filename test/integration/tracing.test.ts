/**
 * OpenTelemetry over OTLP/HTTP: a receiver on 127.0.0.1 collects what a gateway exports. A query
 * sent with a `traceparent` yields a request span and an upstream span under that trace, the
 * upstream gets the trace in its own `traceparent`, the log line carries the trace id, and no
 * attribute holds a credential or personal data.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, kycBody, startFixture, transactionBody } from '../helpers/fixture.ts';
import { gql, PAYMENT_TOKEN, startGateway, TEST_JWT_SECRET } from '../helpers/gateway.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

let receiver: Server;
let receiverUrl: string;
const bodies: string[] = [];
let payment: Fixture;
let kyc: Fixture;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  payment = await startFixture(() => ({
    body: transactionBody({
      customer: { fullname: 'Ada Secret', email: 'ada@private.example', phone: '2348000000001' },
    }),
  }));
  kyc = await startFixture((request) => ({
    body: kycBody({ userRef: request.query.get('userRef'), name: 'Kyc Private Name' }),
  }));
});
afterAll(async () => {
  receiver.close();
  await payment.close();
  await kyc.close();
});

const spansOf = (): OtlpSpan[] =>
  bodies.flatMap((body) => {
    const parsed = JSON.parse(body) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
    };
    return parsed.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  });

it('continues the caller trace through the request and the upstream call, and leaks nothing', async () => {
  const logLines: string[] = [];
  const gateway = await startGateway(
    { paymentUrl: payment.url, kycUrl: kyc.url },
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    { logLines },
  );
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const token = await gateway.token();
  const response = await gql(
    gateway,
    'query Traced { transaction(txRef: "NT-TRACE1") { status customer { email phone fullName } } kycUser(userRef: "usr_secret_ref") { name } }',
    {},
    token,
    { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
  );
  expect(response.errors).toBeUndefined();
  await gateway.close();

  const spans = spansOf().filter((span) => span.traceId === traceId);
  const request = spans.find((span) => span.kind === 2);
  expect(request?.name).toBe('graphql query Traced');
  expect(request?.parentSpanId).toBe('00f067aa0ba902b7');
  const upstream = spans.filter((span) => span.kind === 3);
  expect(upstream.map((span) => span.name).sort()).toEqual(['kyc GET', 'payment GET']);
  for (const span of upstream) expect(span.parentSpanId).toBe(request?.spanId);

  const seenByUpstream = payment.requests.at(-1)?.headers.traceparent;
  expect(String(seenByUpstream)).toMatch(new RegExp(`^00-${traceId}-`));

  const everything = JSON.stringify(spans);
  for (const secret of [
    token,
    PAYMENT_TOKEN,
    TEST_JWT_SECRET,
    'ada@private.example',
    '2348000000001',
    'Ada Secret',
    'Kyc Private Name',
    'usr_secret_ref',
  ]) {
    expect(everything).not.toContain(secret);
  }
  expect(logLines.some((line) => line.includes(`"traceId":"${traceId}"`))).toBe(true);
});

it('exports nothing without an OTLP endpoint', async () => {
  const before = bodies.length;
  const gateway = await startGateway({ paymentUrl: payment.url, kycUrl: kyc.url });
  await gql(gateway, '{ transaction(txRef: "NT-TRACE2") { status } }', {}, await gateway.token());
  await gateway.close();
  expect(bodies.length).toBe(before);
  expect(payment.requests.at(-1)?.headers.traceparent).toBeUndefined();
});

it('exports over http/protobuf by default', async () => {
  const before = bodies.length;
  const gateway = await startGateway(
    { paymentUrl: payment.url, kycUrl: kyc.url },
    { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiverUrl}/v1/traces` },
  );
  await gql(gateway, '{ transaction(txRef: "NT-TRACE3") { status } }', {}, await gateway.token());
  await gateway.close();
  expect(bodies.length).toBeGreaterThan(before);
});
