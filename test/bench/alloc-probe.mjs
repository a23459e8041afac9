// Loaded with `--import` into a gateway that `npm run bench:paired -- --alloc DIR` starts: every heap
// allocation the gateway makes between two SIGUSR2 signals is sampled by V8's sampling heap profiler,
// including the objects that die young (what a CPU profile cannot show and what the request path mostly
// makes), and written as a .heapprofile to ALLOC_PROBE_OUT. The first signal starts sampling and writes
// `<out>.started`; the second stops it and writes the profile. For test/bench/alloc-diff.ts.
// ALLOC_PROBE_LIVE=1: only what is still alive when sampling stops (what the load holds while in flight).
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.ALLOC_PROBE_OUT;
const collected = process.env.ALLOC_PROBE_LIVE !== '1';
// ALLOC_PROBE_PROMOTED=1: only what outlived the young generation (promoted to the old one, then kept or
// collected by a major GC): what makes major GCs, which a per-call allocation figure hides.
const promoted = process.env.ALLOC_PROBE_PROMOTED === '1';
if (out) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.enable', () =>
        session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: collected || promoted, includeObjectsCollectedByMinorGC: collected && !promoted }, () => writeFileSync(`${out}.started`, '')),
      );
      return;
    }
    sampling = false;
    // Written aside and renamed: the driver reads the file as soon as it exists.
    session.post('HeapProfiler.stopSampling', (err, r) => {
      writeFileSync(`${out}.part`, err ? JSON.stringify({ error: String(err) }) : JSON.stringify(r.profile));
      renameSync(`${out}.part`, out);
    });
  });
}
