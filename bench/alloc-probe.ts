/**
 * Preloaded into a process under test by `npm run bench -- --allocations` (`node --import
 * ./bench/alloc-probe.ts …`): V8's sampling heap profiler, counting every sampled allocation,
 * also those the collector has since freed (what a request costs the collector, not what it
 * keeps). The first SIGUSR2 starts sampling and prints `ALLOC_PROBE started`; the next stops it,
 * writes the profile to `ALLOC_PROBE_FILE` and prints `ALLOC_PROBE written`. Nothing in src/ or
 * in the peers knows about it.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const file = process.env.ALLOC_PROBE_FILE;
if (!file) throw new Error('bench/alloc-probe.ts needs ALLOC_PROBE_FILE');
const session = new Session();
session.connect();
let sampling = false;

process.on('SIGUSR2', () => {
  const step = sampling
    ? session.post('HeapProfiler.stopSampling').then(({ profile }) => {
        writeFileSync(file, JSON.stringify(profile));
        sampling = false;
        console.error('ALLOC_PROBE written');
      })
    : session
        .post('HeapProfiler.startSampling', {
          // One sample per 1 KiB allocated on average: a few thousand samples per run.
          samplingInterval: 1024,
          includeObjectsCollectedByMinorGC: true,
          includeObjectsCollectedByMajorGC: true,
        })
        .then(() => {
          sampling = true;
          console.error('ALLOC_PROBE started');
        });
  step.catch((error: unknown) => console.error(`ALLOC_PROBE failed: ${String(error)}`));
});
