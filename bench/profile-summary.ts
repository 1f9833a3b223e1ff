/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
 * the functions with the most inclusive time (time with them anywhere on the stack), and self
 * time by package. Also summarises a sampling heap profile (bench/alloc-probe.ts): bytes
 * allocated per request, by function and by package.
 *
 *   node bench/profile-summary.ts bench/results/profiles/gateway-S1.cpuprofile [top=20]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Row {
  name: string;
  where: string;
  ms: number;
  share: number;
}

export interface Summary {
  totalMs: number;
  /** Time before the first request was served (module loading, building), left out. */
  startupMs: number;
  /** Time the process was idle (waiting in epoll). */
  idleMs: number;
  self: Row[];
  inclusive: Row[];
  /** Inclusive time of the project's own functions (src/), libraries they call included. */
  project: Row[];
  packages: Row[];
}

/** Where a frame comes from, short: `graphql/execution/execute.js:123`, `src/model/time.ts:40`. */
function where(frame: CallFrame): string {
  const { url } = frame;
  if (url === '') return '(native)';
  const line = frame.lineNumber + 1;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return `${url.slice(nm + '/node_modules/'.length)}:${line}`;
  const src = url.indexOf('/src/');
  if (src >= 0) return `${url.slice(src + 1)}:${line}`;
  if (url.startsWith('node:')) return `${url}:${line}`;
  return `${url}:${line}`;
}

/** The package (or area) a frame belongs to. */
function packageOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName.startsWith('(')) return functionName;
    return '(native/builtins)';
  }
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return 'node: (core modules)';
  const src = url.indexOf('/src/');
  if (src >= 0)
    return url
      .slice(src + 1)
      .split('/')
      .slice(0, 2)
      .join('/');
  return url;
}

/** A profile with its nodes by id and each node's parent. */
function readProfile(file: string): {
  profile: CpuProfile;
  byId: Map<number, ProfileNode>;
  parent: Map<number, number>;
} {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  return { profile, byId, parent };
}

/**
 * The index of the first sample with a frame for which `serving` holds on its stack (0 when
 * none has): where the process's start ends.
 */
function firstServing(
  profile: CpuProfile,
  byId: Map<number, ProfileNode>,
  parent: Map<number, number>,
  serving: (frame: CallFrame) => boolean,
): number {
  const inRequestPath = (id: number): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame && serving(frame)) return true;
    }
    return false;
  };
  const first = profile.samples.findIndex(inRequestPath);
  return first === -1 ? 0 : first;
}

/** A frame of the gateway's request path: its HTTP server (`src/server.ts`). */
const SERVING = (frame: CallFrame): boolean => frame.url.endsWith('/src/server.ts');

/**
 * Summarises a profile from its first sample in the request path on (a frame for which
 * `serving` holds): the process's start (module loading, building the schema) is left out, so
 * the shares are of the time spent serving. A profile with no such frame is summarised whole.
 */
export function summarise(file: string, top = 20, serving = SERVING): Summary {
  const { profile, byId, parent } = readProfile(file);
  const from = firstServing(profile, byId, parent, serving);
  let startupUs = 0;
  for (let i = 0; i < from; i++) startupUs += profile.timeDeltas[i] ?? 0;
  const selfByNode = new Map<number, number>();
  let totalUs = 0;
  for (let i = from; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    const delta = profile.timeDeltas[i] ?? 0;
    totalUs += delta;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + delta);
  }

  const key = (frame: CallFrame) => `${frame.functionName || '(anonymous)'}\u0000${where(frame)}`;
  const self = new Map<string, number>();
  const packages = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let idleUs = 0;
  for (const [id, us] of selfByNode) {
    const node = byId.get(id);
    if (!node) continue;
    if (node.callFrame.functionName === '(idle)') idleUs += us;
    const k = key(node.callFrame);
    self.set(k, (self.get(k) ?? 0) + us);
    const p = packageOf(node.callFrame);
    packages.set(p, (packages.get(p) ?? 0) + us);
    // Inclusive: every distinct function on this node's stack gets the node's time once.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame) break;
      const fk = key(frame);
      if (seen.has(fk)) continue;
      seen.add(fk);
      inclusive.set(fk, (inclusive.get(fk) ?? 0) + us);
    }
  }
  const busyUs = totalUs - idleUs;
  const rows = (map: Map<string, number>, denominator: number): Row[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, us]) => {
        const [name = '', at = ''] = k.split('\u0000');
        return { name, where: at, ms: us / 1000, share: denominator > 0 ? us / denominator : 0 };
      });
  const skipRoot = (row: Row) =>
    !['(root)', '(idle)', '(program)', '(garbage collector)'].includes(row.name);
  return {
    totalMs: totalUs / 1000,
    startupMs: startupUs / 1000,
    idleMs: idleUs / 1000,
    self: rows(self, busyUs)
      .filter((row) => row.name !== '(idle)')
      .slice(0, top),
    inclusive: rows(inclusive, busyUs).filter(skipRoot).slice(0, top),
    project: rows(inclusive, busyUs)
      .filter((row) => row.where.startsWith('src/'))
      .slice(0, top),
    packages: rows(packages, busyUs).slice(0, top),
  };
}

/**
 * The gateway's production features as the profile sees them: the frames that are each one's
 * code. `leaf` features (the log line, the metrics, the cache write, the token check, the rate
 * limit) are measured by the time with one of their frames anywhere on the stack; the others wrap
 * the upstream call they guard, so their time on the stack would hold the call itself, and they
 * are measured by their own time: samples whose innermost frame of JavaScript (Node's internals
 * and native code counted to their caller) is theirs.
 */
export const FEATURE_FRAMES: ReadonlyArray<{
  name: string;
  leaf: boolean;
  matches: (frame: CallFrame) => boolean;
}> = [
  {
    name: 'log line',
    leaf: true,
    matches: (f) =>
      f.url.endsWith('/src/observability/logger.ts') ||
      f.url.includes('/node_modules/pino/') ||
      f.url.includes('/node_modules/sonic-boom/'),
  },
  {
    name: 'metrics',
    leaf: true,
    matches: (f) =>
      f.url.includes('/node_modules/prom-client/') ||
      f.url.endsWith('/src/observability/metrics.ts'),
  },
  {
    name: 'record cache write',
    leaf: true,
    matches: (f) =>
      f.functionName === 'writeIfNewer' ||
      (f.functionName === 'store' && f.url.endsWith('/src/cache/store.ts')),
  },
  { name: 'token check', leaf: true, matches: (f) => f.url.endsWith('/src/auth.ts') },
  { name: 'rate limit', leaf: true, matches: (f) => f.url.endsWith('/src/http/rate-limit.ts') },
  {
    name: 'caller share',
    leaf: false,
    matches: (f) => f.url.endsWith('/src/upstream/caller-share.ts'),
  },
  {
    name: 'breaker and bulkhead',
    leaf: false,
    // cockatiel's breaker, the cap's slots (src/upstream/slots.ts: the callers' shares queue
    // through the same code, and their steps count here too), and the HTTP layer's own steps
    // around them (a closed circuit's calls skip the policy; their outcome is counted by
    // `#countFailure` and the window's `success`).
    matches: (f) =>
      f.url.includes('/node_modules/cockatiel/') ||
      f.url.endsWith('/src/upstream/slots.ts') ||
      (f.url.endsWith('/src/upstream/http.ts') &&
        ['#guarded', 'guarded', '#countFailure'].includes(f.functionName)),
  },
  {
    name: 'single flight (in process)',
    leaf: false,
    matches: (f) =>
      f.url.endsWith('/src/cache/sources.ts') &&
      ['run', 'join', 'abandoned', 'close', 'shared'].includes(f.functionName),
  },
];

/** Whether a frame is Node's own or native (its time belongs to the JavaScript that called it). */
function internal(frame: CallFrame): boolean {
  return frame.url === '' || frame.url.startsWith('node:');
}

/** Each feature's share of the busy time from the first request on (see FEATURE_FRAMES). */
export function featureShares(
  file: string,
  serving = SERVING,
): Array<{ name: string; leaf: boolean; ms: number; share: number }> {
  const { profile, byId, parent } = readProfile(file);
  const stack = (id: number): CallFrame[] => {
    const frames: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame) frames.push(frame);
    }
    return frames;
  };
  const us = FEATURE_FRAMES.map(() => 0);
  let busyUs = 0;
  for (let i = firstServing(profile, byId, parent, serving); i < profile.samples.length; i++) {
    const frames = stack(profile.samples[i] as number);
    const leafFrame = frames[0];
    if (leafFrame?.functionName === '(idle)') continue;
    const delta = profile.timeDeltas[i] ?? 0;
    busyUs += delta;
    const own = frames.find((frame) => !internal(frame));
    FEATURE_FRAMES.forEach((feature, index) => {
      const hit = feature.leaf
        ? frames.some(feature.matches)
        : own !== undefined && feature.matches(own);
      if (hit) us[index] = (us[index] ?? 0) + delta;
    });
  }
  return FEATURE_FRAMES.map((feature, index) => ({
    name: feature.name,
    leaf: feature.leaf,
    ms: (us[index] ?? 0) / 1000,
    share: busyUs > 0 ? (us[index] ?? 0) / busyUs : 0,
  }));
}

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;

/** A markdown rendering of a summary. */
export function renderSummary(title: string, summary: Summary): string {
  const lines = [
    `### ${title}`,
    '',
    `Sampled ${(summary.totalMs / 1000).toFixed(1)} s from the first request on (the ${(summary.startupMs / 1000).toFixed(1)} s before it, the process's start, left out), of which idle ${(summary.idleMs / 1000).toFixed(1)} s; shares below are of the busy time.`,
    '',
    '| # | Self time | Share | Function | Where |',
    '| -: | -: | -: | --- | --- |',
    ...summary.self.map(
      (r, i) =>
        `| ${i + 1} | ${r.ms.toFixed(0)} ms | ${pct(r.share)} | \`${r.name}\` | ${r.where} |`,
    ),
    '',
    '| Inclusive (on stack) | Share | Function | Where |',
    '| -: | -: | --- | --- |',
    ...summary.inclusive.map(
      (r) => `| ${r.ms.toFixed(0)} ms | ${pct(r.share)} | \`${r.name}\` | ${r.where} |`,
    ),
    '',
    '| Inclusive, project code (src/) | Share | Function | Where |',
    '| -: | -: | --- | --- |',
    ...summary.project.map(
      (r) => `| ${r.ms.toFixed(0)} ms | ${pct(r.share)} | \`${r.name}\` | ${r.where} |`,
    ),
    '',
    '| Self time by package | Share | Package |',
    '| -: | -: | --- |',
    ...summary.packages.map((r) => `| ${r.ms.toFixed(0)} ms | ${pct(r.share)} | ${r.name} |`),
    '',
  ];
  return lines.join('\n');
}

/** A markdown table of {@link featureShares} for several profiles (one column each). */
export function renderFeatureShares(columns: Array<{ title: string; file: string }>): string {
  const shares = columns.map((column) => featureShares(column.file));
  const lines = [
    `| Feature (its code in the profile) | ${columns.map((c) => c.title).join(' | ')} |`,
    `| --- | ${columns.map(() => '-:').join(' | ')} |`,
  ];
  FEATURE_FRAMES.forEach((feature, index) => {
    lines.push(
      `| ${feature.name} (${feature.leaf ? 'on the stack' : 'own time'}) | ${shares.map((rows) => pct(rows[index]?.share ?? 0)).join(' | ')} |`,
    );
  });
  return lines.join('\n');
}

if (import.meta.main) {
  const [file, top] = process.argv.slice(2);
  if (file === undefined) {
    console.error('usage: node bench/profile-summary.ts <file.cpuprofile> [top]');
    process.exit(1);
  }
  console.log(renderSummary(file, summarise(file, Number(top ?? '20'))));
}

interface AllocationNode {
  callFrame: CallFrame;
  selfSize: number;
  children: AllocationNode[];
}

/** A row of an allocation summary: bytes allocated per request where it happened. */
export interface AllocationRow {
  name: string;
  where: string;
  bytesPerRequest: number;
  share: number;
}

export interface AllocationSummary {
  requests: number;
  bytesPerRequest: number;
  functions: AllocationRow[];
  packages: AllocationRow[];
}

/**
 * Bytes allocated per request, from a sampling heap profile taken over exactly `requests`
 * requests (V8 scales each sample to the bytes it stands for).
 */
export function summariseAllocations(file: string, requests: number, top = 20): AllocationSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: AllocationNode };
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let total = 0;
  const stack = [profile.head];
  for (let node = stack.pop(); node; node = stack.pop()) {
    stack.push(...node.children);
    if (node.selfSize === 0) continue;
    total += node.selfSize;
    const k = `${node.callFrame.functionName || '(anonymous)'}\u0000${where(node.callFrame)}`;
    functions.set(k, (functions.get(k) ?? 0) + node.selfSize);
    const p = packageOf(node.callFrame);
    packages.set(p, (packages.get(p) ?? 0) + node.selfSize);
  }
  const rows = (map: Map<string, number>): AllocationRow[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, bytes]) => {
        const [name = '', at = ''] = k.split('\u0000');
        return {
          name,
          where: at,
          bytesPerRequest: bytes / requests,
          share: total > 0 ? bytes / total : 0,
        };
      });
  return {
    requests,
    bytesPerRequest: total / requests,
    functions: rows(functions),
    packages: rows(packages),
  };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** A markdown rendering of an allocation summary. */
export function renderAllocations(title: string, summary: AllocationSummary): string {
  return [
    `### ${title}`,
    '',
    `${kb(summary.bytesPerRequest)} allocated per request (${summary.requests} requests sampled).`,
    '',
    '| Package | Per request | Share |',
    '| --- | -: | -: |',
    ...summary.packages.map((r) => `| ${r.name} | ${kb(r.bytesPerRequest)} | ${pct(r.share)} |`),
    '',
    '| Function | Where | Per request | Share |',
    '| --- | --- | -: | -: |',
    ...summary.functions.map(
      (r) => `| \`${r.name}\` | ${r.where} | ${kb(r.bytesPerRequest)} | ${pct(r.share)} |`,
    ),
  ].join('\n');
}
