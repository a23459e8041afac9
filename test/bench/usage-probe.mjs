// Loaded with `--import` into a gateway that `npm run bench:paired -- --usage` starts: when the gateway is
// told to stop (SIGTERM), writes to USAGE_PROBE_OUT what its CPU time is made of, which a CPU ratio alone
// cannot tell apart: user and system time, the main thread's and V8's worker threads' share (GC, compiler),
// minor page faults, peak RSS, and the young generation's size then (V8 grows it under load, by process).
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const out = process.env.USAGE_PROBE_OUT;

/** CPU ms per thread name, from /proc/self/task/<tid>/stat (utime + stime, in clock ticks of 10 ms). */
function threadsMs() {
  const by = {};
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      by[name] = (by[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // A thread that ended while being read.
    }
  }
  return by;
}

if (out) {
  process.prependListener('SIGTERM', () => {
    const r = process.resourceUsage();
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    appendFileSync(out, `${JSON.stringify({ userMs: r.userCPUTime / 1000, systemMs: r.systemCPUTime / 1000, minorFaults: r.minorPageFault, maxRssKb: r.maxRSS, youngBytes: young?.space_size, threadsMs: threadsMs() })}\n`);
  });
}
