/**
 * Waiting for a condition instead of for a time: no single wait is longer than 25 ms, and a
 * condition never met fails the test after `ms`.
 */

/** Waits until `read` returns true; resolves with the time it took (ms). */
export async function until(read: () => Promise<boolean> | boolean, ms: number): Promise<number> {
  const started = Date.now();
  while (!(await read())) {
    if (Date.now() - started > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Date.now() - started;
}
