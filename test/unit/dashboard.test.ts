/**
 * The Grafana dashboard (deploy/grafana/gateway-dashboard.json) shows only what the gateway
 * exposes: every metric name in every query is one a running gateway (with Redis, so that the
 * cluster metrics exist) serves on /metrics after one request.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { gql, sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';

const skip = skipRedisTests('dashboard');

interface Dashboard {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
}

const dashboard = JSON.parse(
  readFileSync(new URL('../../deploy/grafana/gateway-dashboard.json', import.meta.url), 'utf8'),
) as Dashboard;

const PROMQL_WORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'by',
  'without',
  'on',
  'ignoring',
  'and',
  'or',
  'unless',
  'le',
]);

/** Metric names in a PromQL expression: its identifiers, less labels, ranges and functions. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without) \([^)]*\)/g, '');
  const names = (bare.match(/\b[a-zA-Z_:][a-zA-Z0-9_:]*\b/g) ?? []).filter(
    (word) => !PROMQL_WORDS.has(word) && !/^\d/.test(word),
  );
  return [...new Set(names)];
}

let sandbox: Sandbox;
let redis: TestRedis;
let gateway: TestGateway;

beforeAll(async () => {
  if (skip) return;
  sandbox = await startSandbox();
  redis = await startRedis();
  gateway = await startGateway(sandboxUpstreams(sandbox), { CACHE_URL: redis.url });
  const token = await gateway.token();
  for (let i = 0; i < 20; i++) {
    const ready = await fetch(`${gateway.url}/readyz`);
    if (ready.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await gql(gateway, '{ transaction(txRef: "NT-SUCCESS001") { status } }', {}, token);
});
afterAll(async () => {
  await gateway?.close();
  await redis?.stop();
  await sandbox?.close();
});

it('has panels with queries', () => {
  expect(dashboard.panels.length).toBeGreaterThan(10);
  for (const panel of dashboard.panels) expect(panel.targets.length).toBeGreaterThan(0);
});

it.skipIf(skip)('names in every query only metrics the gateway exposes', async () => {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const exposed = new Set(
    [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
      type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
    ),
  );
  const used = dashboard.panels.flatMap((panel) =>
    panel.targets.flatMap((target) =>
      metricNames(target.expr).map((name) => ({ panel: panel.title, name })),
    ),
  );
  expect(used.length).toBeGreaterThan(20);
  expect(used.filter(({ name }) => !exposed.has(name))).toEqual([]);
});
