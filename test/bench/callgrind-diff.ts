/**
 * `node --import tsx test/bench/callgrind-diff.ts A B [--top 30]`
 *
 * Where two builds counted by `bench:paired --instructions` differ, function by function: A and B are
 * dump prefixes as that run prints them (.bench/paired/callgrind/0-HEAD.out), every round of each is
 * read (A.1, A.2, …) and each function's exclusive instructions are shown per call. Code V8 generated
 * at run time has only an address in a dump (different in every process): it is named from the perf map
 * V8 wrote for that process (/tmp/perf-<pid>.map, see PREDICTABLE_V8), by function and file, its tiers
 * summed; without a map it is summed as one line, "(JS code)". A function still run by the interpreter
 * is not among them: its bytecodes' handlers are builtins (Builtins_*Handler), shared by every function.
 * V8's builtins, C++ and libc keep their names.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { jitNames, readDump, type Dump } from './callgrind.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' }, calls: { type: 'string', default: '1000' } } });
if (positionals.length !== 2) throw new Error('usage: callgrind-diff.ts A_PREFIX B_PREFIX [--top 30] [--calls 1000]');

function rounds(prefix: string): Dump[] {
  const out: Dump[] = [];
  for (let r = 1; existsSync(`${prefix}.${r}`); r++) out.push(readDump(`${prefix}.${r}`));
  if (out.length === 0) throw new Error(`no dumps ${prefix}.1 …`);
  return out;
}

/** Instructions per call by function name, over every round. */
function perCall(dumps: Dump[]): Map<string, number> {
  const calls = dumps.length * Number(values.calls);
  const by = new Map<string, number>();
  for (const d of dumps) {
    const jit = jitNames(d.pid);
    for (const [name, cost] of d.byFunction) {
      const key = /^0x[0-9a-f]+/.test(name) ? (jit?.(name) ?? '(JS code)') : name.replace(/\(.*$/s, '');
      by.set(key, (by.get(key) ?? 0) + cost / calls);
    }
  }
  return by;
}

const [a, b] = positionals.map((p) => perCall(rounds(p))) as [Map<string, number>, Map<string, number>];
const rows = [...new Set([...a.keys(), ...b.keys()])].map((k) => ({ k, a: a.get(k) ?? 0, b: b.get(k) ?? 0 })).sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a));
const sum = (m: Map<string, number>) => [...m.values()].reduce((s, v) => s + v, 0);
console.log(`${'A'.padStart(9)} ${'B'.padStart(9)} ${'B-A'.padStart(8)}  instructions per call, exclusive`);
for (const r of rows.slice(0, Number(values.top))) console.log(`${r.a.toFixed(0).padStart(9)} ${r.b.toFixed(0).padStart(9)} ${(r.b - r.a).toFixed(0).padStart(8)}  ${r.k.slice(0, 110)}`);
console.log(`${sum(a).toFixed(0).padStart(9)} ${sum(b).toFixed(0).padStart(9)} ${(sum(b) - sum(a)).toFixed(0).padStart(8)}  total`);
