/** Reads one sample from a gateway's /metrics (Prometheus text). */

/**
 * The sum of the samples of `name` that carry these labels (and any others); all of its samples
 * when `labels` is omitted; 0 when no such sample is exposed yet.
 */
export async function metric(
  gateway: { url: string },
  name: string,
  labels?: Record<string, string>,
): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    if (labels) {
      const given = new Set((match[2] ?? '{}').slice(1, -1).split(',').filter(Boolean));
      const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
      if (!wanted.every((pair) => given.has(pair))) continue;
    }
    total += Number(match[3]);
  }
  return total;
}
