// The chaos soak (npm run soak -- --minutes N; default 2): three replicas on one redis-server, loopback
// only, verifier clients in both transports on a shared and a per-session upstream, and a scheduler that
// kills, stops and freezes things at random. Bounded in time and in count (calls, faults). Not part of
// npm test. Prints a report and exits 1 when any answer was crossed, when a shared-upstream call sent
// outside every fault window was lost, or (Streamable HTTP) failed, or when processes were left behind.
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execFileSync } from 'node:child_process';
import { Chaos } from './chaos.js';
import { Ledger, type ClientKind } from './ledger.js';
import { childPids, SoakCluster, type ProcessSample } from './soak-cluster.js';
import { Verifier } from './verifier.js';

const SAMPLE_EVERY_MS = 10_000;
const CALLS_PER_VERIFIER_PER_MINUTE = 1200;
const FAULTS_PER_MINUTE = 15;

function minutesArg(): number {
  const i = process.argv.indexOf('--minutes');
  const m = i >= 0 ? Number(process.argv[i + 1]) : 2;
  if (!Number.isFinite(m) || m <= 0 || m > 120) throw new Error('--minutes takes a number of minutes between 0 and 120');
  return m;
}

/** Server-everything processes started from this checkout that are still running (leaks survive their replica). */
function strayUpstreams(): number {
  const path = resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  return execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(path)).length;
}

async function main(): Promise<void> {
  const minutes = minutesArg();
  const fdsBefore = readdirSync('/proc/self/fd').length;
  const straysBefore = strayUpstreams();
  const cluster = new SoakCluster();
  // Interrupted: nothing of the soak's may outlive it (replicas' upstreams exit when their stdin closes).
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      for (const r of cluster.replicas) r.child.kill('SIGKILL');
      void cluster.redis?.stop().finally(() => process.exit(130));
    });
  }
  await cluster.start(3);
  const ledger = new Ledger();
  const live = () => cluster.live();
  const kinds: ClientKind[] = ['streamable/shared', 'streamable/shared', 'streamable/shared', 'streamable/per-session', 'streamable/per-session', 'sse/shared', 'sse/shared', 'modern/shared', 'modern/shared'];
  const verifiers = kinds.map((k) => new Verifier(k, live, ledger));
  const started = Date.now();
  const deadline = started + minutes * 60_000;
  const samples: { at: number; replica: string; s: ProcessSample }[] = [];
  const sampler = setInterval(() => {
    for (const r of cluster.live()) {
      const s = cluster.sample(r);
      if (s) samples.push({ at: Math.round((Date.now() - started) / 1000), replica: r.name, s });
    }
  }, SAMPLE_EVERY_MS);
  const chaos = new Chaos(cluster, ledger, verifiers.filter((_, i) => kinds[i] === 'streamable/shared'));
  await Promise.all([...verifiers.map((v) => v.run(deadline, Math.ceil(minutes * CALLS_PER_VERIFIER_PER_MINUTE))), chaos.run(deadline, Math.ceil(minutes * FAULTS_PER_MINUTE))]);
  clearInterval(sampler);
  await cluster.stop();
  await sleep(1000); // upstream servers of the last replicas see their stdin close
  // (tsx's own esbuild service is this process's, not the cluster's.)
  const leftChildren = childPids(process.pid).map((pid) => `${pid}: ${commandOf(pid)}`).filter((c) => !c.includes('esbuild'));
  const left = { children: leftChildren, strayUpstreams: strayUpstreams() - straysBefore, fds: readdirSync('/proc/self/fd').length - fdsBefore };
  const report = ledger.report();
  console.log(JSON.stringify({ minutes, faults: ledger.faultCounts(), calls: report, reconnects: verifiers.reduce((n, v) => n + v.reconnects, 0), left }, null, 2));
  printSamples(samples);
  console.log(`faults:\n  ${ledger.timeline().join('\n  ')}`);
  // The bar: nothing crossed anywhere; on shared upstreams nothing lost that was sent after a
  // failure, and no Streamable HTTP call sent after a failure failed. (A legacy SSE session is its stream:
  // a POST sent after the stream's replica died and before the client saw the stream end gets 404.)
  const bad =
    Object.values(report).some((r) => r.crossed > 0) ||
    (['streamable/shared', 'sse/shared', 'modern/shared'] as const).some((k) => (report[k]?.lostOutsideFault ?? 0) > 0) ||
    (['streamable/shared', 'modern/shared'] as const).some((k) => (report[k]?.failedOutsideFault ?? 0) > 0);
  process.exitCode = bad || left.children.length > 0 || left.strayUpstreams > 0 ? 1 : 0;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120);
  } catch {
    return '?';
  }
}

/** RSS, descriptors and children per replica over time, one line per replica. */
function printSamples(samples: { at: number; replica: string; s: ProcessSample }[]): void {
  const by = new Map<string, string[]>();
  for (const { at, replica, s } of samples) {
    const row = by.get(replica) ?? [];
    row.push(`${at}s:${s.rssMb}MB/${s.fds}fd/${s.children}ch`);
    by.set(replica, row);
  }
  console.log('per replica (t: RSS / open fds / child processes):');
  for (const [replica, row] of by) console.log(`  ${replica}: ${row.join(' ')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
