import { readFileSync } from 'node:fs';

/** What `node --cpu-prof` writes: a call tree of nodes, and which node was on top at each sample. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
  /** Microseconds on the system's monotonic clock (the clock of process.hrtime in any process). */
  startTime: number;
}

/** A span on the monotonic clock, in microseconds: only samples inside it are counted. */
export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

/** Now on the monotonic clock the profiler uses, in microseconds. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

export interface ProfileEntry {
  fn: string;
  where: string;
  selfMs: number;
  selfPct: number;
  /** Where its self time came from: the nearest callers outside node's internals, heaviest first. */
  callers: Array<{ via: string; ms: number }>;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Busy share of the sampled time (everything but "(idle)"), in percent. */
  busyPct: number;
  top: ProfileEntry[];
  /** Self time grouped by where the code lives: the gateway's src/, a dependency, or node itself. */
  byArea: Array<{ area: string; selfMs: number; selfPct: number }>;
}

function shortUrl(url: string): string {
  if (!url) return '';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const build = url.indexOf('/.bench/build/');
  if (build >= 0) return `src/${url.slice(build + '/.bench/build/'.length).replace(/\.js$/, '.ts')}`;
  return url.replace(/^file:\/\//, '');
}

function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const s = shortUrl(url);
  return s.startsWith('src/') ? s.split('/').slice(0, 2).join('/') : s;
}

/** Self time per function (summed over call sites), the top `n`, and the split by area. */
export function summarizeProfile(file: string, n = 15, window?: ProfileWindow): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of p.nodes) for (const c of node.children ?? []) parentOf.set(c, node.id);
  /** The first three frames above `id` that are not node internals: what in the app caused the cost. */
  const via = (id: number): string => {
    const frames: string[] = [];
    for (let cur = parentOf.get(id); cur !== undefined && frames.length < 3; cur = parentOf.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (!cf.url || cf.url.startsWith('node:')) continue;
      frames.push(`${cf.functionName || '(anonymous)'} ${shortUrl(cf.url)}:${cf.lineNumber + 1}`);
    }
    return frames.join(' ← ') || '(node internals only)';
  };
  const self = new Map<number, number>();
  let total = 0;
  let at = p.startTime;
  p.samples.forEach((id, i) => {
    at += p.timeDeltas[i] ?? 0;
    // Start-up and shutdown are not what a load profile is about.
    if (window && (at < window.fromUs || at > window.toUs)) return;
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    total += dt;
    self.set(id, (self.get(id) ?? 0) + dt);
  });
  const fns = new Map<string, ProfileEntry>();
  const areas = new Map<string, number>();
  let idle = 0;
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const fn = functionName || '(anonymous)';
    if (fn === '(idle)') {
      idle += ms;
      continue;
    }
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : '';
    const key = `${fn}@${where}`;
    const e = fns.get(key) ?? { fn, where, selfMs: 0, selfPct: 0, callers: [] };
    e.selfMs += ms;
    const v = via(id);
    const c = e.callers.find((x) => x.via === v);
    if (c) c.ms += ms;
    else e.callers.push({ via: v, ms });
    fns.set(key, e);
    const area = areaOf(url, fn);
    areas.set(area, (areas.get(area) ?? 0) + ms);
  }
  const busy = total - idle;
  const top = [...fns.values()].sort((a, b) => b.selfMs - a.selfMs).slice(0, n);
  for (const e of top) {
    e.selfPct = (e.selfMs / busy) * 100;
    e.callers = e.callers.sort((a, b) => b.ms - a.ms).slice(0, 3);
  }
  const byArea = [...areas.entries()]
    .map(([area, ms]) => ({ area, selfMs: ms, selfPct: (ms / busy) * 100 }))
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, 12);
  return { file, totalMs: total, busyPct: (busy / total) * 100, top, byArea };
}
