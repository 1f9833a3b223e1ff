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
    for (let i = 0; i < 3; i += 1) metrics.upstreamLatency.observe(ok, 0.01);
    metrics.upstreamLatency.observe({ upstream: 'kyc', outcome: 'timeout' }, 5);
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
    metrics.upstreamLatency.observe(ok, 0.02);
    const third = await metrics.registry.metrics();
    expect(
      sample(third, 'gateway_upstream_requests_total', 'upstream="payment",outcome="ok"'),
    ).toBe(4);
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
});
