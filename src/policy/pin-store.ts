/** A changed definition waiting for an operator: its hash, the start of its description, when it appeared. */
export interface PendingPin {
  hash: string;
  summary: string;
  /** ISO 8601. */
  firstSeen: string;
  /**
   * An operator reviewed this definition and refused it: it stays withheld and leaves the approval
   * queue. Kept only while the upstream reports this same hash; a new definition is a new change.
   */
  rejected?: true;
  /** Hidden text in this definition (kind, field, count; never the text): what the reviewer should look at. Absent: none. */
  findings?: PinFinding[];
}

/** One kind of hidden text in one field of a pending definition. */
export interface PinFinding {
  kind: string;
  path: string;
  count: number;
}

/**
 * One tool's pin: the approved hash (absent when the config fixes it, or for a new tool that appeared
 * after the upstream was pinned) and a change awaiting approval.
 */
export interface PinEntry {
  approved?: string;
  pending?: PendingPin;
}

/**
 * upstream → tool (the upstream's own name) → entry. Always built with Object.create(null) (see
 * emptyTable): tool names come from upstreams, and "__proto__" or "constructor" must be a key like any
 * other, not a path to Object.prototype (a pin written through the __proto__ setter is silently lost).
 */
export type PinTable = Record<string, Record<string, PinEntry>>;

/**
 * Names recorded per upstream (approved pins plus pending changes). A server that invents names on every
 * list cannot grow the store without end; no real server has anywhere near this many tools. Beyond it a
 * new name is withheld (mode withhold) and not recorded.
 */
export const MAX_TOOLS_PER_UPSTREAM = 1000;

/** One tool definition seen in a list. `fixed` is the config's pin for the tool, if any. */
export interface Sighting {
  tool: string;
  hash: string;
  summary: string;
  fixed: string | undefined;
  /** Hidden text in the definition, when there is some: kept with a pending change for its review. */
  findings?: PinFinding[] | undefined;
  /**
   * The hash this process last heard the store approve for the tool. A store that can lose its data
   * (Redis restarted without persistence, flushed) writes it back when it holds no pin for the tool,
   * before it decides: a lost pin is not a first sighting, and the next definition is not approved blind.
   */
  known?: string | undefined;
}

/** What the store made of one sighting of a tool definition. */
export interface Observation {
  /**
   * The hash the tool is held to: the config's pin, the approved one, or this one at first sight.
   * undefined: a new tool, not in the upstream's pins (it appeared after they were established).
   */
  approved: string | undefined;
  /** Part of the upstream's first listing (it had no pins yet): this hash was just recorded as approved. */
  firstSight: boolean;
  /** Differs from the approved hash (or is a new tool) and was not pending already: the one sighting that reports it. */
  newChange: boolean;
  pending: PendingPin | undefined;
  /** A new name beyond MAX_TOOLS_PER_UPSTREAM: nothing was recorded. */
  unrecorded: boolean;
}

export interface ApprovedPin {
  upstream: string;
  tool: string;
  /** The newly approved hash; "" when a pin was removed (by hand from the pins file). */
  hash: string;
  /** The hash approved before; undefined for a new tool. */
  previous: string | undefined;
  summary: string;
}

/** A pending change an operator refused. */
export interface RejectedPin {
  upstream: string;
  tool: string;
  /** The refused (pending) hash. */
  hash: string;
  /** The hash the tool stays held to; undefined for a new tool. */
  approved: string | undefined;
  summary: string;
}

/**
 * Where pins live: memory (optionally a JSON file the CLI writes too) or Redis (shared by replicas).
 * Sightings are atomic per list, so concurrent replicas agree on the first hash and report a change once.
 */
export interface PinStore {
  /**
   * Records the sightings of one list (or part of one) of an upstream, in one atomic step, and answers
   * for each in order. First sight approves a tool only while the upstream has no pins at all: its first
   * listing is the baseline. `pinnedInConfig`: the config pins some of this upstream's tools, which counts
   * as having pins. A config pin (`fixed`) is never overridden: only a differing hash is kept, as pending.
   */
  observe(upstream: string, sightings: readonly Sighting[], pinnedInConfig: boolean): Promise<Observation[]>;
  /** Makes each tool's pending hash the approved one, provided it is still the hash given (what the operator saw). */
  approve(upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): Promise<ApprovedPin[]>;
  /**
   * Marks each tool's pending change as rejected, provided its hash is still the one given and it is not
   * rejected already. The tool stays held to its approved hash; a later approval by name still works.
   */
  reject(upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): Promise<RejectedPin[]>;
  table(upstreams: readonly string[]): Promise<PinTable>;
  /**
   * Pins changed elsewhere (the CLI, another replica). `report` is true in exactly one process per
   * change, the one that writes the audit line and counts it.
   */
  onApproved: ((pins: ApprovedPin[], report: boolean) => void) | undefined;
  /** Rejections made anywhere (this process, the CLI, another replica); `report` as for onApproved. */
  onRejected: ((pins: RejectedPin[], report: boolean) => void) | undefined;
  /**
   * A store that can lose its data (Redis): writes back approved pins this process holds, each unless
   * the store holds a pin for the tool by then (an approval made since wins).
   */
  restore?(upstream: string, pins: ReadonlyArray<{ tool: string; hash: string }>): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A table (or one upstream's part) safe for any key: see PinTable. */
export function emptyTable<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * A deep copy on null-prototype objects, keeping only well-formed entries: for what comes from outside
 * (the pins file, Redis) and for what leaves a store (callers may change their copy).
 */
export function copyTable(source: unknown): PinTable {
  const out = emptyTable<Record<string, PinEntry>>();
  if (source === null || typeof source !== 'object') return out;
  for (const [upstream, tools] of Object.entries(source)) {
    if (tools === null || typeof tools !== 'object') continue;
    const copy = emptyTable<PinEntry>();
    for (const [tool, e] of Object.entries(tools as Record<string, unknown>)) {
      const entry = e as { approved?: unknown; pending?: { hash?: unknown; summary?: unknown; firstSeen?: unknown; rejected?: unknown; findings?: unknown } } | null;
      if (entry === null || typeof entry !== 'object') continue;
      const next: PinEntry = {};
      if (typeof entry.approved === 'string') next.approved = entry.approved;
      const p = entry.pending;
      if (p && typeof p === 'object' && typeof p.hash === 'string') {
        const findings = copyFindings(p.findings);
        next.pending = { hash: p.hash, summary: String(p.summary ?? ''), firstSeen: String(p.firstSeen ?? ''), ...(p.rejected === true ? { rejected: true as const } : {}), ...(findings ? { findings } : {}) };
      }
      if (next.approved !== undefined || next.pending !== undefined) copy[tool] = next;
    }
    out[upstream] = copy;
  }
  return out;
}

/** Well-formed findings only (they come from files and Redis); undefined when there are none. */
function copyFindings(source: unknown): PinFinding[] | undefined {
  if (!Array.isArray(source)) return undefined;
  const out = source
    .filter((f): f is PinFinding => f !== null && typeof f === 'object' && typeof f.kind === 'string' && typeof f.path === 'string' && typeof f.count === 'number')
    .map((f) => ({ kind: f.kind, path: f.path, count: f.count }));
  return out.length > 0 ? out : undefined;
}

/** Entries counted against MAX_TOOLS_PER_UPSTREAM: approved pins plus pending changes (as Redis counts its two hashes). */
function recorded(tools: Record<string, PinEntry> | undefined): number {
  let n = 0;
  for (const e of Object.values(tools ?? {})) n += (e.approved !== undefined ? 1 : 0) + (e.pending !== undefined ? 1 : 0);
  return n;
}

/**
 * The sighting rules, on a table (the memory store and the file both use them; Redis runs the same in
 * Lua). Whether the upstream has pins is decided once, before the first sighting of the batch: every tool
 * of a first listing is baseline, however the sightings are ordered, and a name that appears in any later
 * list is a change to approve.
 */
export function observeIn(table: PinTable, upstream: string, sightings: readonly Sighting[], pinnedInConfig: boolean, now: string): Observation[] {
  let tools: Record<string, PinEntry> | undefined = table[upstream];
  const baseline = !pinnedInConfig && !Object.values(tools ?? {}).some((e) => e.approved !== undefined);
  let count = recorded(tools);
  const out: Observation[] = [];
  for (const { tool, hash, summary, fixed, findings } of sightings) {
    const entry = tools?.[tool];
    const approved = fixed ?? entry?.approved;
    const full = !entry && count >= MAX_TOOLS_PER_UPSTREAM;
    if (approved === hash) {
      // Back to the approved definition: a stale pending hash must not be approved by mistake later.
      if (entry?.pending) {
        delete entry.pending;
        count--;
        if (entry.approved === undefined) delete tools![tool];
        if (Object.keys(tools!).length === 0) {
          delete table[upstream];
          tools = undefined;
        }
      }
      out.push({ approved, firstSight: false, newChange: false, pending: undefined, unrecorded: false });
    } else if (full) {
      out.push({ approved, firstSight: false, newChange: false, pending: undefined, unrecorded: true });
    } else if (approved === undefined && baseline) {
      tools ??= table[upstream] = emptyTable<PinEntry>();
      count += entry?.pending ? 0 : 1;
      tools[tool] = { approved: hash };
      out.push({ approved: hash, firstSight: true, newChange: false, pending: undefined, unrecorded: false });
    } else if (entry?.pending?.hash === hash) {
      out.push({ approved, firstSight: false, newChange: false, pending: entry.pending, unrecorded: false });
    } else {
      const pending: PendingPin = { hash, summary, firstSeen: now, ...(findings?.length ? { findings } : {}) };
      tools ??= table[upstream] = emptyTable<PinEntry>();
      count += entry?.pending ? 0 : 1;
      tools[tool] = { ...entry, pending };
      out.push({ approved, firstSight: false, newChange: true, pending, unrecorded: false });
    }
  }
  return out;
}

export function approveIn(table: PinTable, upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): ApprovedPin[] {
  const done: ApprovedPin[] = [];
  for (const { tool, hash } of items) {
    const entry = table[upstream]?.[tool];
    if (!entry?.pending || entry.pending.hash !== hash) continue;
    done.push({ upstream, tool, hash, previous: entry.approved, summary: entry.pending.summary });
    table[upstream]![tool] = { approved: hash };
  }
  return done;
}

export function rejectIn(table: PinTable, upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): RejectedPin[] {
  const done: RejectedPin[] = [];
  for (const { tool, hash } of items) {
    const entry = table[upstream]?.[tool];
    if (!entry?.pending || entry.pending.hash !== hash || entry.pending.rejected) continue;
    entry.pending = { ...entry.pending, rejected: true };
    done.push({ upstream, tool, hash, approved: entry.approved, summary: entry.pending.summary });
  }
  return done;
}

/** Pending changes rejected in `after` that were not (with that hash) in `before`: a rejection made by another process. */
export function rejectionsBetween(before: PinTable, after: PinTable): RejectedPin[] {
  const out: RejectedPin[] = [];
  for (const [upstream, tools] of Object.entries(after)) {
    for (const [tool, e] of Object.entries(tools)) {
      const was = before[upstream]?.[tool]?.pending;
      if (!e.pending?.rejected || (was?.rejected && was.hash === e.pending.hash)) continue;
      out.push({ upstream, tool, hash: e.pending.hash, approved: e.approved, summary: e.pending.summary });
    }
  }
  return out;
}

/** Approved hashes that differ between two tables: what changed underneath a running gateway. */
export function approvalsBetween(before: PinTable, after: PinTable): { approved: ApprovedPin[]; other: ApprovedPin[] } {
  const approved: ApprovedPin[] = [];
  const other: ApprovedPin[] = [];
  for (const upstream of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[upstream] ?? emptyTable<PinEntry>();
    const a = after[upstream] ?? emptyTable<PinEntry>();
    for (const tool of new Set([...Object.keys(b), ...Object.keys(a)])) {
      const was = b[tool]?.approved;
      const now = a[tool]?.approved;
      if (was === now) continue;
      const wasPending = now !== undefined && b[tool]?.pending?.hash === now;
      const pin = { upstream, tool, hash: now ?? '', previous: was, summary: wasPending ? b[tool]!.pending!.summary : '' };
      // An approval replaces a pin that existed or approves a pending new tool; anything else (a pin
      // removed, one that appeared by a sighting) is not audited.
      (now !== undefined && (was !== undefined || wasPending) ? approved : other).push(pin);
    }
  }
  return { approved, other };
}
