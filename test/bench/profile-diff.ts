/**
 * `node --import tsx test/bench/profile-diff.ts A.cpuprofile B.cpuprofile [--top 30]`
 *
 * Where two V8 CPU profiles of the same load differ: self time per function (name, file, line), each
 * as a share of its profile's busy time (idle and GC kept apart), so that two builds profiled under
 * `npm run bench:paired -- --prof DIR` can be compared although their runs took different wall time.
 * Prints the functions whose share grew or shrank the most, then GC and program totals.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' }, lines: { type: 'boolean', default: false } } });

/** Self samples per function key, and the busy total (everything but the idle node). */
function selfTimes(file: string): { by: Map<string, number>; busy: number } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const keyOf = new Map<number, string>();
  for (const n of p.nodes) {
    const { functionName, url, lineNumber } = n.callFrame;
    keyOf.set(n.id, `${functionName || '(anonymous)'} ${url ? (values.lines ? `${url.replace(/^.*\/(?=[^/]+\/[^/]+$)/, '')}:${lineNumber + 1}` : url.replace(/^.*\/(?=[^/]+\/[^/]+$)/, '')) : ''}`.trim());
  }
  const by = new Map<string, number>();
  let busy = 0;
  // Counted in samples, not timeDeltas: one stalled sample (a pause, the exit) carries a huge delta.
  p.samples.forEach((id) => {
    const key = keyOf.get(id)!;
    const dt = 1;
    if (key === '(idle)') return;
    busy += dt;
    by.set(key, (by.get(key) ?? 0) + dt);
  });
  return { by, busy };
}

const [a, b] = positionals.map(selfTimes) as [ReturnType<typeof selfTimes>, ReturnType<typeof selfTimes>];
if (!a || !b) throw new Error('name two .cpuprofile files');
const keys = new Set([...a.by.keys(), ...b.by.keys()]);
const rows = [...keys].map((k) => {
  const sa = (a.by.get(k) ?? 0) / a.busy;
  const sb = (b.by.get(k) ?? 0) / b.busy;
  return { k, sa, sb, d: sb - sa };
});
const pct = (x: number) => `${(x * 100).toFixed(2).padStart(6)}%`;
const show = (title: string, list: typeof rows) => {
  console.log(title);
  for (const r of list) console.log(`${pct(r.sa)} ${pct(r.sb)} ${r.d >= 0 ? '+' : ''}${(r.d * 100).toFixed(2).padStart(6)}  ${r.k}`);
};
const top = Number(values.top);
show('share of busy time in A, in B, difference — grew most in B:', rows.sort((x, y) => y.d - x.d).slice(0, top));
show('shrank most in B:', rows.sort((x, y) => x.d - y.d).slice(0, top));
show('largest in B:', rows.sort((x, y) => y.sb - x.sb).slice(0, top));
console.log(`busy samples: A ${a.busy}, B ${b.busy}`);
