/**
 * Instruction counts of a gateway process under valgrind's callgrind, for `bench:paired --instructions`.
 *
 * Wall-clock CPU on a shared two-core machine moves by 5-10 % with the neighbours' load; the number of
 * instructions a process executes does not. The gateway runs under callgrind with instrumentation off
 * (start-up and warm-up at nulgrind speed), then `callgrind_control` switches it on, zeroes the
 * counters before a round of calls and dumps them after it. V8 is made deterministic where it can be:
 * --predictable (no background threads, fixed seeds) and --predictable-gc-schedule (no time- or
 * idle-driven GC heuristics), so that the same build twice executes the same work.
 *
 * What is still not repeatable round to round is the old generation's collection: a mark-compact cycle
 * (incremental marking, finalisation, sweeping) costs ~200 M instructions and comes every few thousand
 * calls, so a round has one or none. And the optimizing compiler still runs now and then after any
 * warm-up. Both are split out of the dump by function name, and the ratio is taken on the rest: the
 * request path's own instructions plus the young-generation scavenges its allocation causes (which are
 * proportional to it). Major GC and JIT are printed beside it, per call, so they are not hidden.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * V8 flags that make a node process execute the same instructions for the same inputs, and
 * --perf-basic-prof: V8 writes /tmp/perf-<pid>.map, the name of every piece of code it generates at run
 * time, so that the JavaScript functions in a dump can be told apart (`jitNames`; callgrind itself names
 * such code only by its address). The flag also keeps code where it was written (no compaction of
 * the code space), so an address names one function for the process's life.
 */
export const PREDICTABLE_V8 = ['--predictable', '--predictable-gc-schedule', '--perf-basic-prof'];

/** The valgrind command line that runs `node …` with counting switched off until asked. */
export function callgrindPrefix(outFile: string): string[] {
  return [
    'valgrind',
    '--tool=callgrind',
    // V8 writes and rewrites machine code in anonymous memory: valgrind must notice it.
    '--smc-check=all-non-file',
    '--instr-atstart=no',
    `--callgrind-out-file=${outFile}`,
    '--quiet',
  ];
}

/** One callgrind_control action on one process (never on all of them: other runs may share the host). */
export async function callgrindControl(pid: number, ...args: string[]): Promise<void> {
  await run('callgrind_control', [...args, String(pid)]);
}

export type Bucket = 'request path' | 'young GC' | 'major GC' | 'JIT';
// The collector's work is counted by the function that executed it (exclusive cost): its functions are
// called from many places, and callgrind records caller-callee pairs, not stacks, so an inclusive cost
// of "everything under a GC" cannot be summed without counting nested entries twice. Helpers the
// collector shares with everything else (malloc, memmove) stay in "request path": small, and alike for
// every build. The compiler has few entry points that never nest, so it is counted inclusively.
const MAJOR_GC = /Marking|MarkCompact|Sweep|Evacuat|RecordMigratedSlot|LiveObjectRange|PointersUpdating|UpdatingItem|MemoryReducer|RelocIterator|VisitRelocInfo|RootVisitor|RootPointer|IterateObjectCache|StringTableCleaner|ClearWeak|FlushedBytecode|ShouldFlushCode|Builtins_RecordWrite|WriteBarrier|BodyDescriptor|HeapObject::SizeFromMap|Map::UsedInstanceSize|JSObject::GetHeaderSize|TqRuntimeFieldSliceScopeInfo|MarkBit|Worklist|CompilationCache\w*::Age|FreeList|PagedSpace|MemoryChunk|CppHeap|cppgc::|Heap::(CollectAllGarbage|FinalizeIncremental|StartIncremental|CompleteSweeping|MarkCompact|IterateRoots)/;
const YOUNG_GC = /Scaveng|SemiSpace|Heap::Scavenge|PretenuringHandler|PromoteYoung/;
const JIT_ENTRY = /Runtime_Compile|Runtime_InstallBaselineCode|Runtime_NotifyDeoptimized|Runtime_.*OnStackReplacement|Deoptimizer::New|Runtime_InstantiateAsmJs/;

export interface Dump {
  /** The process the dump is of (callgrind's `pid:` line). */
  pid: number;
  total: number;
  buckets: Record<Bucket, number>;
  /** Exclusive instructions per function name, for comparing two builds function by function. */
  byFunction: Map<string, number>;
}

/**
 * Reads a callgrind dump (format: https://valgrind.org/docs/manual/cl-format.html). A cost line adds to
 * the current function (fn=) unless it follows a calls= line, where it is the inclusive cost of the call
 * to the current cfn=. Names are compressed: "(12) name" defines id 12, "(12)" refers back to it.
 */
export function readDump(file: string): Dump {
  const names = new Map<string, string>();
  const byFunction = new Map<string, number>();
  const buckets: Record<Bucket, number> = { 'request path': 0, 'young GC': 0, 'major GC': 0, JIT: 0 };
  let fn = '';
  let callee = '';
  let callCost = false;
  let total = 0;
  let pid = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('pid:')) pid = Number(line.slice(4));
    if (line.startsWith('fn=') || line.startsWith('cfn=')) {
      const m = /^c?fn=\((\d+)\)(?: (.*))?$/.exec(line);
      const name = m ? (m[2] !== undefined ? (names.set(m[1]!, m[2]), m[2]) : (names.get(m[1]!) ?? m[1]!)) : line.slice(line.indexOf('=') + 1);
      if (line.startsWith('fn=')) fn = name;
      else callee = name;
    } else if (line.startsWith('calls=')) callCost = true;
    else if (/^[0-9+*-]/.test(line)) {
      const cost = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (!callCost) byFunction.set(fn, (byFunction.get(fn) ?? 0) + cost);
      else {
        callCost = false;
        if (JIT_ENTRY.test(callee) && !JIT_ENTRY.test(fn)) buckets.JIT += cost;
      }
    } else if (line.startsWith('totals:') || line.startsWith('summary:')) total = Number(line.split(/\s+/)[1]);
  }
  for (const [name, cost] of byFunction) {
    if (MAJOR_GC.test(name)) buckets['major GC'] += cost;
    else if (YOUNG_GC.test(name)) buckets['young GC'] += cost;
  }
  buckets['request path'] = total - buckets['young GC'] - buckets['major GC'] - buckets.JIT;
  return { pid, total, buckets, byFunction };
}

/**
 * The names of a process's generated code, from V8's perf map (`START SIZE NAME`, hex, one line per piece
 * of code as it was generated), as a lookup from a callgrind function name (`0x…`, the address of its first
 * instruction, with a `'N` suffix for a recursion level) to the function's name without its tier marker
 * (`~` baseline, `^` Sparkplug/Maglev, `*` optimized) or directory: `JS:readModernRequest
 * modern-request.ts:77:35`. Undefined without a map (a dump taken without --perf-basic-prof).
 */
export function jitNames(pid: number): ((fnName: string) => string | undefined) | undefined {
  const file = `/tmp/perf-${pid}.map`;
  if (!existsSync(file)) return undefined;
  const starts: number[] = [];
  const ends: number[] = [];
  const names: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (!m) continue;
    starts.push(parseInt(m[1]!, 16));
    ends.push(parseInt(m[1]!, 16) + parseInt(m[2]!, 16));
    // The tier marker and where the build lives dropped: two builds' functions share a name.
    names.push(m[3]!.replace(/^(\w+:)[~^*+]/, '$1').replace(/ (?:file:\/\/)?\/\S*?\/(?:dist|src)\/(\S+)$/, ' $1').replace(/ \/\S*\/([^/\s]+)$/, ' $1'));
  }
  // Code space is reused once code is collected: an address can be in several entries, and the code
  // there is the one written last (the counted rounds come at the end of the process's life). The
  // entries are few thousand and so are the addresses asked: each is checked against all, once.
  const seen = new Map<number, string | undefined>();
  return (fnName) => {
    const m = /^0x([0-9a-f]+)/.exec(fnName);
    if (!m) return undefined;
    const addr = parseInt(m[1]!, 16);
    if (seen.has(addr)) return seen.get(addr);
    let name: string | undefined;
    for (let i = starts.length - 1; i >= 0; i--) {
      if (starts[i]! <= addr && addr < ends[i]!) {
        name = names[i];
        break;
      }
    }
    seen.set(addr, name);
    return name;
  };
}
