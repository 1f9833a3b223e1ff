/**
 * The benchmark harness's own guarantees: a system under test writes its output to a file of
 * its own (no pipe read on the load generator's core) and runs on the project's Node 24; the
 * features mode's share is the median of its pairs.
 */
import { readlinkSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { share } from '../../bench/features.ts';
import {
  JSON_PORT,
  LOG_DIR,
  NODE,
  NODE_VERSION,
  type Started,
  startNode,
} from '../../bench/lib.ts';

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
