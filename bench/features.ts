/**
 * `npm run bench -- --features`: what each production feature of the gateway costs. The bare
 * pipeline (every feature below off) is measured against the bare pipeline plus one feature, in
 * short rounds in which both processes, started together for that feature, are loaded at once on
 * core 0; each feature's share is 1 − its req/s ÷ the bare pipeline's (and the same from µs of
 * CPU per request), the median of the rounds. With `--marginal` the production pipeline is
 * measured against it less one feature. "All together" adds every switchable feature at once;
 * {@link NOISE_FLOOR}, two processes of the same pipeline, shows what the run cannot tell apart.
 *
 * The switches: three are the gateway's own settings (the token check is AUTH_DISABLED against
 * AUTH_JWT_SECRET, the rate limit RATE_LIMIT_RPS=0 against a limit no request reaches, the log
 * line LOG_LEVEL=warn against info); the others are BENCH_FEATURES_OFF (src/settings.ts,
 * read in src/config.ts alone and refused in production), so every run here is
 * NODE_ENV=development with GraphiQL and introspection off, as the auth-off tables.
 *
 * With `--marginal` the question turns round: the whole production pipeline (every feature on,
 * {@link FULL_ENV}) against the same pipeline with one feature off ({@link Feature.without}), so
 * each share is what that feature adds to the pipeline as production runs it. A feature alone
 * over the bare pipeline can cost more than it does there (the bulkhead queues the calls that
 * the caller share would have held back) or less (what it shares with the others).
 */

import type { BenchFeature } from '../src/settings.ts';

/** Every BENCH_FEATURES_OFF switch. */
const ALL_OFF: readonly BenchFeature[] = [
  'breaker',
  'cache-write',
  'single-flight',
  'caller-share',
  'metrics',
];

/** One feature as the bench turns it on over the bare pipeline. */
export interface Feature {
  name: string;
  /** Environment of the gateway with this feature on (over BARE_ENV). */
  env: Record<string, string>;
  /** Whether requests carry the bearer token (the token check needs one). */
  token: boolean;
  /**
   * `--marginal`: the environment of the production pipeline with this feature off (over
   * {@link FULL_ENV}), and whether its requests then carry the token.
   */
  without: { env: Record<string, string>; token: boolean };
}

/** The bare pipeline: every feature this file can switch off, off. */
export const BARE_ENV: Record<string, string> = {
  NODE_ENV: 'development',
  AUTH_DISABLED: 'true',
  RATE_LIMIT_RPS: '0',
  SERVICE_RATE_LIMIT_RPS: '0',
  LOG_LEVEL: 'warn',
  BENCH_FEATURES_OFF: ALL_OFF.join(','),
};

const offBut = (feature: BenchFeature): string => ALL_OFF.filter((f) => f !== feature).join(',');

const RATE_LIMIT_NEVER_REACHED = {
  RATE_LIMIT_RPS: '1000000',
  RATE_LIMIT_BURST: '1000000',
  SERVICE_RATE_LIMIT_RPS: '1000000',
  SERVICE_RATE_LIMIT_BURST: '1000000',
};

/** The production pipeline: every feature on (the rate limit set where no request reaches it). */
export const FULL_ENV: Record<string, string> = {
  ...BARE_ENV,
  AUTH_DISABLED: '',
  ...RATE_LIMIT_NEVER_REACHED,
  LOG_LEVEL: 'info',
  BENCH_FEATURES_OFF: '',
};

/** The production pipeline with one BENCH_FEATURES_OFF switch off. */
const fullBut = (feature: BenchFeature) => ({
  env: { BENCH_FEATURES_OFF: feature },
  token: true,
});

/**
 * A second process of the base pipeline (the bare one; with `--marginal`, the production one),
 * measured against the first like every feature: what its share shows is the run's noise, not a
 * cost.
 */
export const NOISE_FLOOR: Feature = {
  name: 'nothing (a second process of the base pipeline: the noise floor)',
  env: {},
  token: false,
  without: { env: {}, token: true },
};

export const FEATURES: Feature[] = [
  {
    name: 'token check (HS256, verified-token cache)',
    env: { AUTH_DISABLED: '' },
    token: true,
    without: { env: { AUTH_DISABLED: 'true' }, token: false },
  },
  {
    name: 'rate limit (per caller, never reached)',
    env: RATE_LIMIT_NEVER_REACHED,
    token: false,
    without: { env: { RATE_LIMIT_RPS: '0', SERVICE_RATE_LIMIT_RPS: '0' }, token: true },
  },
  {
    name: 'caller share',
    env: { BENCH_FEATURES_OFF: offBut('caller-share') },
    token: false,
    without: fullBut('caller-share'),
  },
  {
    name: 'breaker and bulkhead',
    env: { BENCH_FEATURES_OFF: offBut('breaker') },
    token: false,
    without: fullBut('breaker'),
  },
  {
    name: 'record cache write',
    env: { BENCH_FEATURES_OFF: offBut('cache-write') },
    token: false,
    without: fullBut('cache-write'),
  },
  {
    name: 'single flight',
    env: { BENCH_FEATURES_OFF: offBut('single-flight') },
    token: false,
    without: fullBut('single-flight'),
  },
  {
    name: 'log line (info)',
    env: { LOG_LEVEL: 'info' },
    token: false,
    without: { env: { LOG_LEVEL: 'warn' }, token: true },
  },
  {
    name: 'metrics',
    env: { BENCH_FEATURES_OFF: offBut('metrics') },
    token: false,
    without: fullBut('metrics'),
  },
  {
    name: 'all together',
    env: {
      AUTH_DISABLED: '',
      ...RATE_LIMIT_NEVER_REACHED,
      LOG_LEVEL: 'info',
      BENCH_FEATURES_OFF: '',
    },
    token: true,
    without: { env: BARE_ENV, token: false },
  },
];

/** The features of the issue that have no switch yet, and why. */
export const NOT_SWITCHABLE: Array<{ name: string; why: string }> = [
  {
    name: 'admission',
    why: 'the token-then-rate admission is the first two steps of the operation entry (src/transports/operation.ts); its parts are measured above as the token check and the rate limit',
  },
  {
    name: 'upstream shape validation',
    why: "the upstream readers (src/upstream/shapes.ts) also normalise the record (status, cents, times, card digits): without them there is no answer to serve, so the shape's cost is only seen in the profile",
  },
  {
    name: 'exact money',
    why: 'amounts are read as decimals inside the same shapes; the exact reviver of src/upstream/clients.ts only runs on numbers of more than 15 digits, which the stub never sends (so it costs nothing here)',
  },
];

export interface PairResult {
  bareRps: number;
  featureRps: number;
  /**
   * µs of the process's CPU per request answered (its CPU time over the run ÷ requests): unlike
   * req/s, this does not move when other processes take the core from it.
   */
  bareCpuUs?: number;
  featureCpuUs?: number;
}

/** 1 − feature ÷ bare (req/s), the median over the pairs. */
export function share(pairs: PairResult[]): number {
  return median(pairs.map((p) => 1 - p.featureRps / p.bareRps));
}

/**
 * The same share from CPU per request: 1 − bare's µs ÷ the feature's µs, which is what the
 * req/s share would be on a core of its own. The median over the pairs that have both figures.
 */
export function cpuShare(pairs: PairResult[]): number {
  return median(
    pairs.flatMap((p) =>
      p.bareCpuUs !== undefined && p.featureCpuUs !== undefined && p.featureCpuUs > 0
        ? [1 - p.bareCpuUs / p.featureCpuUs]
        : [],
    ),
  );
}

/**
 * The middle half of the rounds' CPU shares (first to third quartile): how far apart the
 * rounds of one feature fell.
 */
export function cpuSpread(pairs: PairResult[]): [number, number] {
  const shares = pairs
    .flatMap((p) =>
      p.bareCpuUs !== undefined && p.featureCpuUs !== undefined && p.featureCpuUs > 0
        ? [1 - p.bareCpuUs / p.featureCpuUs]
        : [],
    )
    .sort((a, b) => a - b);
  if (shares.length === 0) return [Number.NaN, Number.NaN];
  const at = (q: number) => shares[Math.min(shares.length - 1, Math.floor(q * shares.length))];
  return [at(0.25) ?? Number.NaN, at(0.75) ?? Number.NaN];
}

function median(values: number[]): number {
  const shares = [...values].sort((a, b) => a - b);
  if (shares.length === 0) return Number.NaN;
  const middle = Math.floor(shares.length / 2);
  return shares.length % 2 === 1
    ? (shares[middle] ?? Number.NaN)
    : ((shares[middle - 1] ?? 0) + (shares[middle] ?? 0)) / 2;
}
