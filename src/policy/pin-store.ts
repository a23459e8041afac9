/** A changed definition waiting for an operator: its hash, the start of its description, when it appeared. */
export interface PendingPin {
  hash: string;
  summary: string;
  /** ISO 8601. */
  firstSeen: string;
}

/** One tool's pin: the approved hash (absent when the config fixes it) and a change awaiting approval. */
export interface PinEntry {
  approved?: string;
  pending?: PendingPin;
}

/** upstream → tool (the upstream's own name) → entry. */
export type PinTable = Record<string, Record<string, PinEntry>>;

/** What the store made of one sighting of a tool definition. */
export interface Observation {
  /** The hash the tool is held to: the config's pin, the approved one, or this one at first sight. */
  approved: string;
  /** Never seen before: this hash was just recorded as approved (trust on first use). */
  firstSight: boolean;
  /** Differs from the approved hash and was not pending already: the one sighting that reports the change. */
  newChange: boolean;
  pending: PendingPin | undefined;
}

export interface ApprovedPin {
  upstream: string;
  tool: string;
  /** The newly approved hash; "" when a pin was removed (by hand from the pins file). */
  hash: string;
  /** The hash approved before, if any. */
  previous: string | undefined;
  summary: string;
}

/**
 * Where pins live: memory (optionally a JSON file the CLI writes too) or Redis (shared by replicas).
 * Sightings are atomic per tool, so concurrent replicas agree on the first hash and report a change once.
 */
export interface PinStore {
  /**
   * Records a sighting. `fixed` is the config's pin for the tool, which the store never overrides: only a
   * differing hash is kept, as pending, so that `pins list` can show it.
   */
  observe(upstream: string, tool: string, hash: string, summary: string, fixed: string | undefined): Promise<Observation>;
  /** Makes each tool's pending hash the approved one, provided it is still the hash given (what the operator saw). */
  approve(upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): Promise<ApprovedPin[]>;
  table(upstreams: readonly string[]): Promise<PinTable>;
  /**
   * Pins changed elsewhere (the CLI, another replica). `report` is true in exactly one process per
   * change, the one that writes the audit line and counts it.
   */
  onApproved: ((pins: ApprovedPin[], report: boolean) => void) | undefined;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The sighting rules, on a plain table (the memory store and the file both use them; Redis runs the same in Lua). */
export function observeIn(table: PinTable, upstream: string, tool: string, hash: string, summary: string, fixed: string | undefined, now: string): Observation {
  const entry = table[upstream]?.[tool];
  const approved = fixed ?? entry?.approved;
  if (approved === undefined) {
    (table[upstream] ??= {})[tool] = { approved: hash };
    return { approved: hash, firstSight: true, newChange: false, pending: undefined };
  }
  if (approved === hash) {
    // Back to the approved definition: a stale pending hash must not be approved by mistake later.
    if (entry?.pending) {
      delete entry.pending;
      if (entry.approved === undefined) delete table[upstream]![tool];
      if (Object.keys(table[upstream]!).length === 0) delete table[upstream];
    }
    return { approved, firstSight: false, newChange: false, pending: undefined };
  }
  if (entry?.pending?.hash === hash) return { approved, firstSight: false, newChange: false, pending: entry.pending };
  const pending = { hash, summary, firstSeen: now };
  (table[upstream] ??= {})[tool] = { ...entry, pending };
  return { approved, firstSight: false, newChange: true, pending };
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

/** Approved hashes that differ between two tables: what changed underneath a running gateway. */
export function approvalsBetween(before: PinTable, after: PinTable): { approved: ApprovedPin[]; other: ApprovedPin[] } {
  const approved: ApprovedPin[] = [];
  const other: ApprovedPin[] = [];
  for (const upstream of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[upstream] ?? {};
    const a = after[upstream] ?? {};
    for (const tool of new Set([...Object.keys(b), ...Object.keys(a)])) {
      const was = b[tool]?.approved;
      const now = a[tool]?.approved;
      if (was === now) continue;
      const pin = { upstream, tool, hash: now ?? '', previous: was, summary: b[tool]?.pending?.hash === now ? b[tool]!.pending!.summary : '' };
      // An approval replaces a pin that existed; anything else (a pin removed, one that appeared) is not audited.
      (was !== undefined && now !== undefined ? approved : other).push(pin);
    }
  }
  return { approved, other };
}
