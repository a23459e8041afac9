import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { AuditLog, PinAuditEvent } from './audit-log.js';
import type { HiddenTextScanner } from './hidden-text.js';
import { reviewScanner } from './hidden-text-guard.js';
import { walkDefinition } from './hidden-text-walk.js';
import { MAX_TOOLS_PER_UPSTREAM, type ApprovedPin, type Observation, type PinFinding, type PinStore } from './pin-store.js';
import { toolPinHash, toolSummary } from './tool-pin-hash.js';
import { pinBlock, type PinBlock } from './pin-block.js';

export type PinMode = 'withhold' | 'warn' | 'off';
/** What pinning reads of the config: modes and fixed pins, and the hidden-text patterns its reviews are scanned with. */
type PinsConfig = Pick<Config, 'pinning' | 'upstreams'> & Partial<Pick<Config, 'endpoints' | 'tenants'>>;
export type PinAction = PinAuditEvent['action'];

/** Pin events as they happen, for metrics. */
export interface PinObserver {
  change(action: PinAction, upstream: string): void;
}


interface Verdict {
  hash: string;
  block: PinBlock | undefined;
  at: number;
  /** The hash the store held the tool to (not a config pin): written back by a store that lost it. */
  approved: string | undefined;
}

/** A check waiting for its batch to reach the store. */
interface Asked {
  name: string;
  hash: string;
  summary: string;
  fixed: string | undefined;
  findings: PinFinding[] | undefined;
  known: string | undefined;
  mode: 'withhold' | 'warn';
  key: string;
  resolve: (block: PinBlock | undefined) => void;
  reject: (err: unknown) => void;
}

/**
 * A withheld verdict is asked of the store again after this long, in case an approval's announcement
 * was lost (pub/sub is fire-and-forget); a passing one stands until its tool's pin changes.
 */
const RECHECK_MS = 15_000;
/** Verdicts kept; a server inventing tool names without end cannot grow the cache without end. */
const MAX_VERDICTS = 50_000;
/** An upstream over MAX_TOOLS_PER_UPSTREAM is logged about at most this often (it says so on every list). */
const CAP_WARN_MS = 60_000;

/**
 * Tool-definition pinning. Each tool an upstream reports is hashed (its name, description and schemas)
 * and held to a pin: fixed in config, or recorded by the store at first sight. A tool whose hash differs
 * is withheld from clients (mode withhold) or passed with a warning (warn) until an operator approves
 * the change (`switchboard pins approve`). Verdicts are cached per (upstream, tool, hash), so a call
 * costs two map lookups; the store is asked only when a definition is new to this process.
 */
/** Definitions remembered by hash: enough for every tool of a large gateway, old and new version. */
const SEEN_DEFINITIONS = 4000;

export class ToolPins {
  readonly #modes = new Map<string, PinMode>();
  /** Config pins, in Maps: a tool named "constructor" must not find Object.prototype.constructor. */
  readonly #fixed = new Map<string, ReadonlyMap<string, string>>();
  readonly #store: PinStore;
  readonly #logger: Logger;
  readonly #audit: AuditLog | undefined;
  readonly #observer: PinObserver | undefined;
  readonly #verdicts = new Map<string, Verdict>();
  readonly #deciding = new Map<string, Promise<PinBlock | undefined>>();
  /** Definition object → hash: a catalogue's definitions are hashed once, not on every call. */
  readonly #hashes = new WeakMap<object, string>();
  /** Tools passed unchecked while the store was unavailable (warned about once each). */
  readonly #provisional = new Set<string>();
  readonly #listeners: Array<(upstream: string, tools: string[]) => void> = [];
  /** Per upstream, the checks made in this tick (one list page): they go to the store as one batch. */
  readonly #batches = new Map<string, Asked[]>();
  /** Upstreams the store has answered for: it has pins for them, so a never-seen tool is a new one. */
  readonly #answered = new Set<string>();
  /** Upstream → when it was last logged about for going over MAX_TOOLS_PER_UPSTREAM. */
  readonly #capWarned = new Map<string, number>();
  /** Hash → the definition seen with it (the latest SEEN_DEFINITIONS): what an operator compares before approving. */
  readonly #seen = new Map<string, Readonly<Record<string, unknown>>>();
  /** Bumped by every approval: a decision that started before it must not be cached after it. */
  #generation = 0;
  /** Hidden text in a new definition goes with it into the store, for the review of its change. */
  #scanner: HiddenTextScanner;

  constructor(config: PinsConfig, store: PinStore, opts: { logger: Logger; audit?: AuditLog | undefined; observer?: PinObserver | undefined }) {
    this.#scanner = reviewScanner(config);
    for (const u of config.upstreams) this.#modes.set(u.name, u.pinning ?? config.pinning.mode);
    for (const [upstream, tools] of Object.entries(config.pinning.pins)) {
      const pins = new Map(Object.entries(tools));
      if (pins.size > 0) this.#fixed.set(upstream, pins);
    }
    this.#store = store;
    this.#logger = opts.logger.child({ component: 'pins' });
    this.#audit = opts.audit;
    this.#observer = opts.observer;
    // long-lived: one pin store per gateway
    store.onApproved = (pins, report) => this.#approved(pins, report);
    // A rejection changes no verdict (the tool was withheld, or warned about, and stays so): it is audited.
    // long-lived: one pin store per gateway
    store.onRejected = (pins, report) => {
      for (const p of pins) if (report && this.modeOf(p.upstream) !== 'off') this.#report({ action: 'rejected', upstream: p.upstream, tool: p.tool, pinnedSha256: p.approved, sha256: p.hash, summary: p.summary, source: 'store' });
    };
  }

  /** Whether any upstream is pinned at all (otherwise the router need not ask). */
  get enabled(): boolean {
    return [...this.#modes.values()].some((m) => m !== 'off');
  }

  get store(): PinStore {
    return this.#store;
  }

  /** A reload's upstreams: each one's mode from the next check on (the config's fixed pins need a restart). */
  reconfigure(config: PinsConfig): void {
    this.#scanner = reviewScanner(config);
    const before = new Map(this.#modes);
    this.#modes.clear();
    for (const u of config.upstreams) this.#modes.set(u.name, u.pinning ?? config.pinning.mode);
    // A verdict is given under its upstream's mode, and one that lets a tool through is kept until the
    // definition changes: a changed definition passed under warn went on passing once a reload switched
    // the upstream to withhold. Its upstream's verdicts go with the mode (and any decision under way).
    const moved = new Set([...before.keys(), ...this.#modes.keys()].filter((u) => before.get(u) !== this.#modes.get(u)));
    if (moved.size === 0) return;
    this.#generation++;
    for (const key of [...this.#verdicts.keys()]) if (moved.has(key.slice(0, key.indexOf('\0')))) this.#verdicts.delete(key);
  }

  modeOf(upstream: string): PinMode {
    return this.#modes.get(upstream) ?? 'off';
  }

  /** Called with the upstream and tools whose pins were approved (to tell clients their list changed). */
  onApproved(listener: (upstream: string, tools: string[]) => void): void {
    this.#listeners.push(listener);
  }

  start(): Promise<void> {
    return this.#store.start();
  }

  /**
   * The store lost its data (Redis restarted without persistence, flushed): the pins this process holds
   * are written back. Left out, the upstream's next listing was a first sighting, and a definition
   * changed meanwhile was approved unreviewed.
   */
  async republish(): Promise<void> {
    const byUpstream = new Map<string, Array<{ tool: string; hash: string }>>();
    for (const [key, v] of this.#verdicts) {
      if (v.approved === undefined) continue;
      const at = key.indexOf('\0');
      const pins = byUpstream.get(key.slice(0, at)) ?? [];
      byUpstream.set(key.slice(0, at), pins);
      pins.push({ tool: key.slice(at + 1), hash: v.approved });
    }
    for (const [upstream, pins] of byUpstream) await this.#store.restore?.(upstream, pins);
  }

  close(): Promise<void> {
    return this.#store.close();
  }

  #remember(hash: string, tool: Readonly<Record<string, unknown>>): void {
    this.#seen.delete(hash);
    this.#seen.set(hash, tool);
    if (this.#seen.size > SEEN_DEFINITIONS) this.#seen.delete(this.#seen.keys().next().value!);
  }

  /** The definition this process saw with a hash, if it still remembers it (the admin API's old/new view). */
  definition(hash: string): Readonly<Record<string, unknown>> | undefined {
    return this.#seen.get(hash);
  }

  /** undefined: the tool may be listed and called. A ToolGate (src/router/tool-gate.ts). */
  check(upstream: string, tool: Record<string, unknown>): PinBlock | undefined | Promise<PinBlock | undefined> {
    const mode = this.#modes.get(upstream);
    if (mode === undefined || mode === 'off') return undefined;
    const name = tool.name;
    // The router drops such items from lists; a definition without a usable name is never admitted.
    if (typeof name !== 'string' || name === '') {
      return { message: `A tool of upstream "${upstream}" is withheld: its name is not a non-empty string (a protocol violation by the upstream)`, details: { upstream, rule: 'pinning.invalid-name' } };
    }
    let hash = this.#hashes.get(tool);
    if (hash === undefined) {
      hash = toolPinHash(tool);
      this.#hashes.set(tool, hash);
      this.#remember(hash, tool);
    }
    const key = `${upstream}\0${name}`;
    const v = this.#verdicts.get(key);
    if (v && v.hash === hash && (v.block === undefined || Date.now() - v.at < RECHECK_MS)) return v.block;
    // Concurrent lists at start-up ask about the same definitions: one store round trip each.
    const dk = `${key}\0${hash}`;
    let p = this.#deciding.get(dk);
    if (!p) {
      const findings = walkDefinition(this.#scanner, tool).findings;
      p = this.#ask(upstream, { name, hash, summary: toolSummary(tool), fixed: this.#fixed.get(upstream)?.get(name), findings: findings.length > 0 ? findings : undefined, known: v?.approved, mode, key }).finally(() => this.#deciding.delete(dk));
      this.#deciding.set(dk, p);
    }
    return p;
  }

  /**
   * Why batches: first sight approves a tool only while its upstream has no pins, so the store must see
   * a first listing as one set. Asked one by one, the first tool of a first list would be pinned and
   * its siblings, a moment later, would look like new tools (and be withheld). Nor can this process
   * decide "baseline" for an upstream on its own: two replicas listing at once, or a restart against a
   * persisted store, must agree, so the store decides, atomically, once per batch. The router makes the
   * checks of one list page in one synchronous loop, so one microtask later they are all here; a
   * paginated first listing is checked as a whole (the router checks the upstream's catalogue first).
   */
  #ask(upstream: string, asked: Omit<Asked, 'resolve' | 'reject'>): Promise<PinBlock | undefined> {
    let batch = this.#batches.get(upstream);
    if (!batch) {
      const mine: Asked[] = (batch = []);
      this.#batches.set(upstream, mine);
      queueMicrotask(() => {
        this.#batches.delete(upstream);
        void this.#decide(upstream, mine);
      });
    }
    const into = batch;
    return new Promise<PinBlock | undefined>((resolve, reject) => into.push({ ...asked, resolve, reject }));
  }

  async #decide(upstream: string, batch: Asked[]): Promise<void> {
    const generation = this.#generation;
    let obs: Observation[];
    try {
      obs = await this.#store.observe(upstream, batch.map((a) => ({ tool: a.name, hash: a.hash, summary: a.summary, fixed: a.fixed, findings: a.findings, known: a.known })), this.#fixed.has(upstream));
      if (obs.length !== batch.length) throw new Error(`the pin store answered ${obs.length} of ${batch.length} sightings`);
    } catch (err) {
      for (const a of batch) a.resolve(this.#unchecked(upstream, a, err as Error));
      return;
    }
    this.#answered.add(upstream);
    batch.forEach((a, i) => {
      try {
        a.resolve(this.#verdictOf(upstream, a, obs[i]!, generation));
      } catch (err) {
        a.reject(err);
      }
    });
  }

  #verdictOf(upstream: string, a: Asked, obs: Observation, generation: number): PinBlock | undefined {
    const { name, hash, summary, mode, key } = a;
    this.#provisional.delete(key);
    const source = a.fixed !== undefined ? 'config' : 'store';
    let block: PinBlock | undefined;
    if (obs.unrecorded) {
      this.#overCap(upstream, mode);
      if (mode === 'withhold') {
        block = pinBlock({ upstream, tool: name, rule: 'pinning.limit', sha256: hash });
      }
    } else {
      if (obs.firstSight) this.#report({ action: 'pinned', upstream, tool: name, pinnedSha256: undefined, sha256: hash, summary, source });
      if (obs.approved !== hash) {
        if (obs.newChange) this.#report({ action: mode === 'withhold' ? 'withheld' : 'warned', upstream, tool: name, pinnedSha256: obs.approved, sha256: hash, summary, source });
        if (mode === 'withhold') block = this.#block(upstream, name, obs.approved, hash, source);
      }
    }
    if (generation === this.#generation) {
      if (this.#verdicts.size >= MAX_VERDICTS) this.#verdicts.clear();
      this.#verdicts.set(key, { hash, block, at: Date.now(), approved: a.fixed === undefined && !obs.unrecorded ? obs.approved : undefined });
    }
    return block;
  }

  #overCap(upstream: string, mode: 'withhold' | 'warn'): void {
    const now = Date.now();
    if (now - (this.#capWarned.get(upstream) ?? -Infinity) < CAP_WARN_MS) return;
    this.#capWarned.set(upstream, now);
    const what = mode === 'withhold' ? 'withheld' : 'passed without a pin (pinning mode warn)';
    this.#logger.warn({ upstream, limit: MAX_TOOLS_PER_UPSTREAM }, `the upstream reports more tool names than the pin store records per upstream: new names are ${what} and not recorded`);
  }

  /**
   * The store cannot be asked (Redis is down). Sessions owned here keep working through an outage, so
   * what this process knows decides, and nothing is cached (the store is asked again next time): a
   * config pin decides as always; a definition that differs from the one this process last saw for the
   * tool is withheld for now, and so is a tool new to an upstream this process knows to be pinned; a
   * tool of an upstream this process has not seen yet passes provisionally, with a warning.
   */
  #unchecked(upstream: string, a: Asked, err: Error): PinBlock | undefined {
    const { name, hash, fixed, mode, key } = a;
    if (fixed !== undefined) return fixed === hash || mode === 'warn' ? undefined : this.#block(upstream, name, fixed, hash, 'config');
    const known = this.#verdicts.get(key);
    if (known?.hash === hash) return known.block;
    const pinned = this.#answered.has(upstream) || this.#fixed.has(upstream);
    if (mode === 'warn' || (!known && !pinned)) {
      if (!this.#provisional.has(key)) this.#logger.warn({ upstream, tool: name, sha256: hash, err: err.message }, 'the pin store is unavailable: tool passed without a pin check, until the store answers again');
      this.#provisional.add(key);
      return undefined;
    }
    const what = known ? 'its definition changed' : 'it is a new tool';
    this.#logger.warn({ upstream, tool: name, sha256: hash, err: err.message }, `the pin store is unavailable and ${what}: withheld for now`);
    return pinBlock({ upstream, tool: name, rule: 'pinning.store-unavailable', newTool: !known, sha256: hash });
  }

  #block(upstream: string, tool: string, pinned: string | undefined, sha256: string, source: 'config' | 'store'): PinBlock {
    if (pinned === undefined) return pinBlock({ upstream, tool, rule: 'pinning.withhold', newTool: true, pinnedSha256: null, sha256 });
    return pinBlock({ upstream, tool, rule: source === 'config' ? 'pinning.pins' : 'pinning.withhold', pinnedSha256: pinned, sha256 });
  }

  #approved(pins: ApprovedPin[], report: boolean): void {
    this.#generation++;
    const byUpstream = new Map<string, string[]>();
    for (const p of pins) {
      this.#verdicts.delete(`${p.upstream}\0${p.tool}`);
      if (this.modeOf(p.upstream) === 'off') continue;
      if (report && p.hash) this.#report({ action: 'approved', upstream: p.upstream, tool: p.tool, pinnedSha256: p.previous, sha256: p.hash, summary: p.summary, source: 'store' });
      const list = byUpstream.get(p.upstream) ?? [];
      list.push(p.tool);
      byUpstream.set(p.upstream, list);
    }
    for (const [upstream, tools] of byUpstream) for (const l of this.#listeners) l(upstream, tools);
  }

  #report(e: PinAuditEvent): void {
    this.#observer?.change(e.action, e.upstream);
    this.#audit?.pin(e);
    const { action: _a, ...line } = e;
    const what = e.pinnedSha256 === undefined ? 'new tool appeared after the upstream was pinned' : 'tool definition changed since it was pinned';
    if (e.action === 'withheld') this.#logger.warn(line, `${what}: withheld until an operator approves it`);
    else if (e.action === 'warned') this.#logger.warn(line, `${what}: passed with a warning (pinning mode warn)`);
    else if (e.action === 'approved') this.#logger.info(line, 'tool definition change approved');
    else if (e.action === 'rejected') this.#logger.info(line, 'tool definition change rejected: the tool stays held to its pin');
    else this.#logger.debug(line, 'tool definition pinned at first sight');
  }
}
