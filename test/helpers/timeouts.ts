/**
 * How long a test waits at most for something that takes longer on a busy machine: a process to
 * start, a page to load, a condition to be met. One factor for all of them, so that a loaded CI
 * runner (or the CPU hog of docs/testing.md) slows the suite down instead of failing it:
 * `TEST_TIMEOUT_SCALE` when set (a number ≥ 1), else 3 under `CI=true`, else 2.
 *
 * These are upper bounds only: a wait that is met returns at once, so a larger factor costs
 * nothing when the suite passes and makes a failure slower to report. A time a test asserts on
 * (an answer within a bound the gateway promises) is not scaled: those bounds come from settings
 * the test injects.
 */

/** The factor: `TEST_TIMEOUT_SCALE`, else 3 in CI, else 2. */
export function timeoutScale(env: NodeJS.ProcessEnv = process.env): number {
  const set = env.TEST_TIMEOUT_SCALE;
  if (set !== undefined && set !== '') {
    const factor = Number(set);
    if (!Number.isFinite(factor) || factor < 1) {
      throw new Error(`TEST_TIMEOUT_SCALE must be a number ≥ 1 (got ${JSON.stringify(set)})`);
    }
    return factor;
  }
  return env.CI === 'true' ? 3 : 2;
}

const SCALE = timeoutScale();

/** `ms` times the factor: the most a test waits for something a busy machine slows down. */
export function scaled(ms: number): number {
  return Math.round(ms * SCALE);
}
