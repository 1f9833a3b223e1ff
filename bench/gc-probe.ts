/**
 * Preloaded into the gateway by bench/growth.ts (`node --expose-gc --import ./bench/gc-probe.ts
 * src/main.ts`), so that the harness can ask how much memory is really retained, which RSS
 * alone does not tell (V8 lets garbage pile up while memory is plentiful). On SIGUSR2 it runs a
 * full GC and prints one line `GC_PROBE {"rss":…,"heapUsed":…,…}` to stderr. Nothing in src/
 * knows about it.
 */
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  console.error(`GC_PROBE ${JSON.stringify({ ...process.memoryUsage(), gc: gc !== undefined })}`);
});
