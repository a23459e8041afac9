/**
 * Repeating a noisy phase until two runs of it agree (#20): on a shared two-core machine one run of a
 * phase can be off by a third, and nothing in a single figure says so. A phase runs at least twice;
 * while no two runs are within `agreePct` of each other it runs again, up to `maxAttempts`, and the
 * figure says whether two agreed.
 */

/** What a repeated figure carries about its repeats. */
export interface Agreement {
  attempts: number;
  /** Whether two runs came within the tolerance of each other. */
  agreed: boolean;
  /** How far apart the two closest runs were, in percent of the smaller (NaN after a single run). */
  spreadPct: number;
}

/**
 * How far apart two runs are: the largest difference over their figures, in percent of the smaller
 * value. Figures that are not finite in either run are not comparable and make the runs disagree.
 */
export function spreadPct(a: readonly number[], b: readonly number[]): number {
  let worst = 0;
  for (let k = 0; k < Math.max(a.length, b.length); k++) {
    const x = a[k];
    const y = b[k];
    if (x === undefined || y === undefined || !Number.isFinite(x) || !Number.isFinite(y)) return Infinity;
    const lo = Math.min(Math.abs(x), Math.abs(y));
    const hi = Math.max(Math.abs(x), Math.abs(y));
    if (hi === 0) continue;
    worst = Math.max(worst, lo === 0 ? Infinity : ((hi - lo) / lo) * 100);
  }
  return worst;
}

/** The two runs closest to each other (earliest pair on a tie); undefined with fewer than two. */
export function closestPair(runs: ReadonlyArray<readonly number[]>): { i: number; j: number; spreadPct: number } | undefined {
  let out: { i: number; j: number; spreadPct: number } | undefined;
  for (let i = 0; i < runs.length; i++) {
    for (let j = i + 1; j < runs.length; j++) {
      const s = spreadPct(runs[i]!, runs[j]!);
      if (!out || s < out.spreadPct) out = { i, j, spreadPct: s };
    }
  }
  return out;
}

export interface RepeatOptions {
  /** Two runs agree when every figure of one is within this many percent of the other's. */
  agreePct: number;
  maxAttempts: number;
  /** Asked before every run after the second: false when the run's budget for repeats is spent. */
  mayRepeat: () => boolean;
}

/**
 * Runs `run` (given the attempt number, from 0) until two runs agree on `figures`, and returns the
 * member of the closest pair that saw less foreign load, with what the repeats found.
 */
export async function repeatUntilAgree<T extends { foreignPct: number }>(run: (attempt: number) => Promise<T>, figures: (r: T) => number[], o: RepeatOptions): Promise<T & Agreement> {
  const runs: T[] = [await run(0)];
  let pair: ReturnType<typeof closestPair>;
  while (runs.length < Math.max(1, o.maxAttempts) && (runs.length < 2 || o.mayRepeat())) {
    runs.push(await run(runs.length));
    pair = closestPair(runs.map(figures));
    if (pair && pair.spreadPct <= o.agreePct) break;
  }
  if (!pair) return { ...runs[0]!, attempts: runs.length, agreed: false, spreadPct: NaN };
  const [a, b] = [runs[pair.i]!, runs[pair.j]!];
  const kept = b.foreignPct < a.foreignPct ? b : a;
  return { ...kept, attempts: runs.length, agreed: pair.spreadPct <= o.agreePct, spreadPct: pair.spreadPct };
}
