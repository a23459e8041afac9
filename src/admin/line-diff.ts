/**
 * The most edits the diff aligns (removed plus added lines, past the lines both ends share). Tool
 * definitions come from upstreams, whatever their size: the alignment costs time in (lines × edits) and
 * memory in edits², so a change beyond this is shown whole (every line of one side removed, every line
 * of the other added) rather than hold the event loop and the heap (GET /pins, each console tick).
 */
const MAX_EDITS = 400;

/**
 * A line diff: "  " kept, "- " only in `a`, "+ " only in `b`. The shortest edit script (Myers' O(ND)
 * algorithm): a change of a few lines in a definition of thousands costs a few passes, not a table
 * of one cell per pair of lines (which took gigabytes for a 10,000-line definition).
 */
export function lineDiff(a: readonly string[], b: readonly string[]): string[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) (endA--, endB--);
  const oldMiddle = a.slice(start, endA);
  const newMiddle = b.slice(start, endB);
  const middle = editScript(oldMiddle, newMiddle) ?? [...oldMiddle.map((l) => `- ${l}`), ...newMiddle.map((l) => `+ ${l}`)];
  return [...a.slice(0, start).map((l) => `  ${l}`), ...middle, ...a.slice(endA).map((l) => `  ${l}`)];
}

/** Myers' greedy search for the shortest edit script, then its path back; undefined past MAX_EDITS. */
function editScript(a: readonly string[], b: readonly string[]): string[] | undefined {
  const max = Math.min(a.length + b.length, MAX_EDITS);
  const off = max + 1;
  // v[k + off]: the furthest x reached on diagonal k (y = x - k); trace[d]: v as round d found it.
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[k - 1 + off]! < v[k + 1 + off]!) ? v[k + 1 + off]! : v[k - 1 + off]! + 1;
      let y = x - k;
      while (x < a.length && y < b.length && a[x] === b[y]) (x++, y++);
      v[k + off] = x;
      if (x >= a.length && y >= b.length) return pathBack(trace, a, b, off);
    }
  }
  return undefined;
}

function pathBack(trace: readonly Int32Array[], a: readonly string[], b: readonly string[], off: number): string[] {
  const out: string[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[k - 1 + off]! < v[k + 1 + off]!) ? k + 1 : k - 1;
    const prevX = v[prevK + off]!;
    const prevY = prevX - prevK;
    for (; x > prevX && y > prevY; y--) out.push(`  ${a[--x]}`);
    if (d > 0) out.push(x === prevX ? `+ ${b[--y]}` : `- ${a[--x]}`);
  }
  return out.reverse();
}
