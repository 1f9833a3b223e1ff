/**
 * Waiting for a condition instead of for a time: no single wait is longer than 25 ms, and a
 * condition never met fails the test after `ms` scaled for a busy machine (./timeouts.ts).
 */
import { scaled } from './timeouts.ts';

/** Waits until `read` returns true; resolves with the time it took (ms). */
export async function until(read: () => Promise<boolean> | boolean, ms: number): Promise<number> {
  const started = Date.now();
  const most = scaled(ms);
  while (!(await read())) {
    if (Date.now() - started > most) throw new Error(`condition not met within ${most} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Date.now() - started;
}
