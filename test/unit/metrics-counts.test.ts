import { describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../../src/observability/metrics.ts';

/** The value of the sample of `name` with exactly these labels in the text exposition. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('counts kept off the request path', () => {
  it('counts upstream calls as the latency histogram observes them, the same at every read', async () => {
    const metrics = new GatewayMetrics();
    const ok = { upstream: 'payment', outcome: 'ok' };
    for (let i = 0; i < 3; i += 1) metrics.upstreamCall(ok, 0.01);
    metrics.upstreamCall({ upstream: 'kyc', outcome: 'timeout' }, 5);
    const first = await metrics.registry.metrics();
    expect(
      sample(first, 'gateway_upstream_requests_total', 'upstream="payment",outcome="ok"'),
    ).toBe(3);
    expect(
      sample(first, 'gateway_upstream_requests_total', 'upstream="kyc",outcome="timeout"'),
    ).toBe(1);
    // Read again: copied, not added again.
    const second = await metrics.registry.metrics();
    expect(
      sample(second, 'gateway_upstream_requests_total', 'upstream="payment",outcome="ok"'),
    ).toBe(3);
    metrics.upstreamCall(ok, 0.02);
    const third = await metrics.registry.metrics();
    expect(
      sample(third, 'gateway_upstream_requests_total', 'upstream="payment",outcome="ok"'),
    ).toBe(4);
    // The histogram itself: every call in its count, sum and buckets, each once.
    const latency = 'gateway_upstream_request_duration_seconds';
    expect(sample(third, `${latency}_count`, 'upstream="payment",outcome="ok"')).toBe(4);
    expect(sample(third, `${latency}_sum`, 'upstream="payment",outcome="ok"')).toBeCloseTo(0.05);
    expect(sample(third, `${latency}_bucket`, 'le="0.01",upstream="payment",outcome="ok"')).toBe(3);
    expect(sample(third, `${latency}_bucket`, 'le="0.025",upstream="payment",outcome="ok"')).toBe(
      4,
    );
    expect(sample(third, `${latency}_bucket`, 'le="5",upstream="kyc",outcome="timeout"')).toBe(1);
  });

  it('observes upstream calls soon after a thousand have gathered, without a read', async () => {
    const metrics = new GatewayMetrics();
    const ok = { upstream: 'payment', outcome: 'ok' };
    for (let i = 0; i < 1500; i += 1) metrics.upstreamCall(ok, 0.01);
    expect(metrics.pendingUpstreamCalls).toBe(1500);
    await new Promise((resolve) => setImmediate(resolve));
    expect(metrics.pendingUpstreamCalls).toBe(0);
    const text = await metrics.registry.metrics();
    expect(
      sample(
        text,
        'gateway_upstream_request_duration_seconds_count',
        'upstream="payment",outcome="ok"',
      ),
    ).toBe(1500);
  });

  it('hands cache events to their counter when read, each once', async () => {
    const metrics = new GatewayMetrics();
    metrics.cacheEvent('transaction', 'miss');
    metrics.cacheEvent('transaction', 'miss');
    metrics.cacheEvent('kyc', 'hit');
    const first = await metrics.registry.metrics();
    expect(sample(first, 'gateway_cache_events_total', 'kind="transaction",outcome="miss"')).toBe(
      2,
    );
    expect(sample(first, 'gateway_cache_events_total', 'kind="kyc",outcome="hit"')).toBe(1);
    const second = await metrics.registry.metrics();
    expect(sample(second, 'gateway_cache_events_total', 'kind="transaction",outcome="miss"')).toBe(
      2,
    );
    metrics.cacheEvent('transaction', 'miss');
    const third = await metrics.registry.metrics();
    expect(sample(third, 'gateway_cache_events_total', 'kind="transaction",outcome="miss"')).toBe(
      3,
    );
  });

  it('keeps documents, requests in flight and request durations off the request path, exact at every read', async () => {
    const metrics = new GatewayMetrics();
    metrics.document('cached');
    metrics.document('cached');
    metrics.document('prepared');
    metrics.requestStarted();
    metrics.requestStarted();
    metrics.requestEnded();
    metrics.observeDuration('query', 0.002);
    metrics.observeDuration('query', 0.02, { business: 'shop-a' });
    metrics.observeDuration(undefined, 0.5);
    const first = await metrics.registry.metrics();
    expect(sample(first, 'gateway_documents_total', 'outcome="cached"')).toBe(2);
    expect(sample(first, 'gateway_documents_total', 'outcome="prepared"')).toBe(1);
    const inFlight = first
      .split('\n')
      .find((l) => l.startsWith('gateway_graphql_requests_in_flight '));
    expect(inFlight).toBe('gateway_graphql_requests_in_flight 1');
    const duration = 'gateway_graphql_request_duration_seconds';
    expect(sample(first, `${duration}_count`, 'operation_type="query"')).toBe(1);
    expect(sample(first, `${duration}_count`, 'operation_type="query",business="shop-a"')).toBe(1);
    expect(sample(first, `${duration}_bucket`, 'le="0.0025",operation_type="query"')).toBe(1);
    expect(sample(first, `${duration}_count`, 'operation_type="none"')).toBe(1);
    // Read again: nothing counted twice.
    metrics.document('cached');
    metrics.requestEnded();
    const second = await metrics.registry.metrics();
    expect(sample(second, 'gateway_documents_total', 'outcome="cached"')).toBe(3);
    expect(sample(second, `${duration}_count`, 'operation_type="query"')).toBe(1);
    expect(
      second.split('\n').find((l) => l.startsWith('gateway_graphql_requests_in_flight ')),
    ).toBe('gateway_graphql_requests_in_flight 0');
    // A business no longer served: its series go, and come back only if it is observed again.
    await metrics.forgetBusiness('shop-a');
    const third = await metrics.registry.metrics();
    expect(
      sample(third, `${duration}_count`, 'operation_type="query",business="shop-a"'),
    ).toBeUndefined();
  });

  it('counts requests by operation, outcome and business when read, each once', async () => {
    const metrics = new GatewayMetrics();
    metrics.request('Tx', 'ok');
    metrics.request('Tx', 'ok');
    metrics.request('Tx', 'error');
    metrics.request('Tx', 'ok', { business: 'shop-a' });
    const name = 'gateway_graphql_requests_total';
    const first = await metrics.registry.metrics();
    expect(sample(first, name, 'operation="Tx",outcome="ok"')).toBe(2);
    expect(sample(first, name, 'operation="Tx",outcome="error"')).toBe(1);
    expect(sample(first, name, 'operation="Tx",outcome="ok",business="shop-a"')).toBe(1);
    metrics.request('Tx', 'ok');
    const second = await metrics.registry.metrics();
    expect(sample(second, name, 'operation="Tx",outcome="ok"')).toBe(3);
    expect(sample(second, name, 'operation="Tx",outcome="error"')).toBe(1);
  });
});
