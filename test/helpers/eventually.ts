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

/** The sum of a metric's series whose labels contain `labels`, from a gateway's /metrics. */
export async function metric(baseUrl: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || !line.includes(labels)) continue;
    const match = /^(\w+)(\{[^}]*\})? ([\d.e+-]+)$/.exec(line);
    if (match?.[1] === name) sum += Number(match[3]);
  }
  return sum;
}
