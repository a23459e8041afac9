/**
 * `node --import tsx test/bench/alloc-diff.ts A.heapprofile [B.heapprofile] [--calls N] [--top 30] [--stacks]`
 *
 * Where a gateway's heap allocations go, from the sampling heap profiles that `npm run bench:paired --
 * --alloc DIR` writes (every allocation sampled, the short-lived ones too): bytes per call by allocating
 * function (name, file, line), for one build or side by side for two, the largest differences first.
 * --stacks: by the allocating function and its two callers (which call site of a shared helper allocates).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface AllocNode { callFrame: CallFrame; selfSize: number; children: AllocNode[] }

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { calls: { type: 'string', default: '10000' }, top: { type: 'string', default: '30' }, stacks: { type: 'boolean', default: false } },
});
const calls = Number(values.calls);

const frame = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(?=[^/]+\/[^/]+$)/, '')}:${f.lineNumber + 1}`;

/** Self bytes per key (the allocating function, or with --stacks its short stack). */
function bytesBy(file: string): Map<string, number> {
  const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: AllocNode };
  const by = new Map<string, number>();
  const walk = (n: AllocNode, stack: string[]) => {
    const here = [...stack, frame(n.callFrame)];
    if (n.selfSize > 0) {
      const key = values.stacks ? here.slice(-3).reverse().join(' < ') : here.at(-1)!;
      by.set(key, (by.get(key) ?? 0) + n.selfSize);
    }
    for (const c of n.children) walk(c, here);
  };
  walk(head, []);
  return by;
}

const [a, b] = positionals.map(bytesBy);
if (!a) throw new Error('name one or two .heapprofile files');
const per = (x: number) => (x / calls).toFixed(0).padStart(7);
const sum = (m: Map<string, number>) => [...m.values()].reduce((s, x) => s + x, 0);
if (!b) {
  console.log(`bytes per call (${calls} calls): ${per(sum(a))}`);
  for (const [k, v] of [...a].sort((x, y) => y[1] - x[1]).slice(0, Number(values.top))) console.log(`${per(v)}  ${k}`);
} else {
  console.log(`bytes per call (${calls} calls): A ${per(sum(a))}  B ${per(sum(b))}`);
  const keys = new Set([...a.keys(), ...b.keys()]);
  const rows = [...keys].map((k) => ({ k, x: a.get(k) ?? 0, y: b.get(k) ?? 0 })).sort((r, s) => Math.abs(s.y - s.x) - Math.abs(r.y - r.x));
  for (const r of rows.slice(0, Number(values.top))) console.log(`${per(r.x)} ${per(r.y)} ${r.y - r.x >= 0 ? '+' : '-'}${per(Math.abs(r.y - r.x)).trim().padStart(6)}  ${r.k}`);
}
