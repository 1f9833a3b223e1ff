/**
 * The benchmark harness's own guarantees: a system under test writes its output to a file of
 * its own (no pipe read on the load generator's core) and runs on the project's Node 24; the
 * features mode's share is the median of its rounds, with their spread; a profile's summary
 * leaves out the process's start.
 */
import { mkdtempSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { cpuSpread, share } from '../../bench/features.ts';
import {
  JSON_PORT,
  LOG_DIR,
  NODE,
  NODE_VERSION,
  type Started,
  startNode,
} from '../../bench/lib.ts';
import { featureShares, summarise } from '../../bench/profile-summary.ts';

let started: Started | undefined;
afterEach(async () => {
  await started?.stop();
  started = undefined;
});

it('starts a system with stdout and stderr on a file under bench/results/logs, not a pipe', async () => {
  started = await startNode({
    name: 'stub',
    script: 'bench/upstream-stub.ts',
    env: {},
    portPattern: JSON_PORT,
  });
  expect(started.logFile.startsWith(`${LOG_DIR}/`)).toBe(true);
  // What the child's fds 1 and 2 are: the log file itself.
  for (const fd of [1, 2]) {
    expect(readlinkSync(`/proc/${started.pid}/fd/${fd}`)).toBe(started.logFile);
  }
  expect(started.output()).toMatch(/\{"port":\d+\}/);
  const before = started.outputBytes();
  expect(before).toBeGreaterThan(0);
  expect(started.outputFrom(before)).toBe('');
  const stats = await fetch(`http://127.0.0.1:${started.port}/__stats`);
  expect(await stats.json()).toEqual({ payment: 0, kyc: 0 });
});

it('runs the systems on Node 24, the project pinned devDependency', () => {
  expect(NODE).toMatch(/node_modules\/node\/bin\/node$/);
  expect(NODE_VERSION).toMatch(/^v24\./);
});

it("takes a feature's share as the median of its alternating pairs", () => {
  expect(share([{ bareRps: 1000, featureRps: 900 }])).toBeCloseTo(0.1);
  expect(
    share([
      { bareRps: 1000, featureRps: 900 },
      { bareRps: 1000, featureRps: 500 },
      { bareRps: 1000, featureRps: 950 },
    ]),
  ).toBeCloseTo(0.1);
  expect(
    share([
      { bareRps: 1000, featureRps: 900 },
      { bareRps: 1000, featureRps: 800 },
    ]),
  ).toBeCloseTo(0.15);
  expect(share([])).toBeNaN();
});

/** A frame of a synthetic V8 CPU profile. */
function frame(functionName: string, url: string) {
  return { functionName, url, scriptId: '0', lineNumber: 0, columnNumber: 0 };
}

/** A synthetic profile written to a file of its own. */
function written(profile: object): string {
  const file = join(mkdtempSync(join(tmpdir(), 'profile-')), 'p.cpuprofile');
  writeFileSync(file, JSON.stringify(profile));
  return file;
}

it("gives the middle half of the rounds' CPU shares", () => {
  const rounds = [100, 110, 125, 200].map((featureCpuUs) => ({
    bareRps: 1,
    featureRps: 1,
    bareCpuUs: 100,
    featureCpuUs,
  }));
  const [low, high] = cpuSpread(rounds);
  expect(low).toBeCloseTo(1 - 100 / 110);
  expect(high).toBeCloseTo(1 - 100 / 200);
  expect(cpuSpread([]).every(Number.isNaN)).toBe(true);
});

it("summarises a profile from its first sample in the gateway's server on", () => {
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 3] },
      { id: 2, callFrame: frame('compile', 'node:internal/modules/esm/loader'), children: [] },
      { id: 3, callFrame: frame('serve', 'file:///app/src/server.ts'), children: [4] },
      { id: 4, callFrame: frame('readAnswer', 'file:///app/src/upstream/clients.ts') },
    ],
    // Start-up first (node 2), then the request path.
    samples: [2, 2, 2, 4, 2, 4],
    timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000],
    startTime: 0,
    endTime: 6000,
  };
  const file = written(profile);
  const summary = summarise(file);
  expect(summary.startupMs).toBe(3);
  expect(summary.totalMs).toBe(3);
  expect(summary.self.find((row) => row.name === 'readAnswer')?.ms).toBe(2);
  expect(summary.self.find((row) => row.name === 'compile')?.ms).toBe(1);
});

it("takes a feature's share of a profile on the stack, or as its own time when it wraps a call", () => {
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2] },
      { id: 2, callFrame: frame('serve', 'file:///app/src/server.ts'), children: [3, 5, 7] },
      {
        id: 3,
        callFrame: frame('writeRequestLine', 'file:///app/src/observability/logger.ts'),
        children: [4],
      },
      { id: 4, callFrame: frame('writeUtf8String', ''), children: [] },
      {
        id: 5,
        callFrame: frame('execute', 'file:///app/node_modules/cockatiel/dist/Bulkhead.js'),
        children: [6],
      },
      {
        id: 6,
        callFrame: frame('readAnswer', 'file:///app/src/upstream/clients.ts'),
        children: [],
      },
      { id: 7, callFrame: frame('(idle)', ''), children: [] },
    ],
    // Log line 2 ms (one in native code it called), the bulkhead's own 1 ms, the call it wraps
    // 3 ms, idle 4 ms (not busy).
    samples: [3, 4, 5, 6, 6, 6, 7, 7, 7, 7],
    timeDeltas: Array.from({ length: 10 }, () => 1000),
    startTime: 0,
    endTime: 10_000,
  };
  const file = written(profile);
  const shares = Object.fromEntries(featureShares(file).map((row) => [row.name, row.share]));
  expect(shares['log line']).toBeCloseTo(2 / 6);
  expect(shares['breaker and bulkhead']).toBeCloseTo(1 / 6);
  expect(shares.metrics).toBe(0);
});
