import { isDeepStrictEqual } from 'node:util';
import { GatewayError } from '../errors.js';
import { forEachPage, pageParams } from '../jsonrpc/paging.js';

/** An instance's tools or prompts: name → definition as the upstream reported it. */
export type Catalogue = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

type Kind = 'tools' | 'prompts';
/** One page's request; `receipt` is where the answer's size on the wire is written (see OutgoingOptions). */
type List = (method: string, params: Record<string, unknown> | undefined, receipt: { resultBytes?: number | undefined }) => Promise<Record<string, unknown>>;
/** What the catalogues need of the upstream's config. */
interface UpstreamSettings {
  name: string;
  maxResultBytes: number;
  relist: { intervalMs: number; unknownToolMs: number };
}

export interface CatalogueOptions {
  /** The gateway found the catalogue changed (no list_changed came): told as that notification would be. */
  onChanged?: ((kind: Kind) => void) | undefined;
  /** The clock the re-list bound runs on (tests give their own). */
  now?: (() => number) | undefined;
}

/** Same names, same definitions: a listing that changes nothing keeps the catalogue object (and the views built from it). */
/** A definition without its x-mcp-header annotations (what else of it changed). */
function unannotated(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unannotated);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'x-mcp-header').map(([k, x]) => [k, unannotated(x)]));
}

function sameCatalogue(a: Catalogue, b: Catalogue): boolean {
  if (a.size !== b.size) return false;
  for (const [name, d] of a) if (!isDeepStrictEqual(d, b.get(name))) return false;
  return true;
}

function byName(items: unknown, into = new Map<string, Record<string, unknown>>()): Map<string, Record<string, unknown>> {
  for (const item of Array.isArray(items) ? (items as Array<Record<string, unknown>>) : []) if (typeof item?.name === 'string') into.set(item.name, item);
  return into;
}

/**
 * What an instance offers, by name (all pages of tools/list or prompts/list), cached until the upstream
 * says its list changed or restarts, or the gateway sees that it changed without saying so: a complete
 * listing passed on to a client that differs from the cache replaces it (what the client was shown is
 * what it can call), and a call of a name the cache does not know lists afresh once (see findFor). The
 * tools' definitions are kept for tool pinning and header mirroring.
 */
export class InstanceCatalogues {
  readonly #list: List;
  readonly #upstream: () => UpstreamSettings;
  readonly #onChanged: (kind: Kind) => void;
  readonly #now: () => number;
  readonly #cached = new Map<Kind, Promise<Catalogue>>();
  /** The catalogue last listed (by the gateway or a client), what a new listing is compared with. */
  readonly #settled = new Map<Kind, Catalogue>();
  /** When it was listed (relist.intervalMs runs from there). */
  readonly #settledAt = new Map<Kind, number>();
  /** A re-list under way: callers that come meanwhile wait for it rather than list too. */
  readonly #relisting = new Map<Kind, Promise<Catalogue>>();
  /** When an unknown name last made a re-list (the bound: relist.unknownToolMs). */
  readonly #unknownAt = new Map<Kind, number>();
  /** The tools as last listed (what a call's arguments are mirrored into headers by, for modern HTTP upstreams). */
  tools: Catalogue | undefined;

  constructor(list: List, upstream: () => UpstreamSettings, opts: CatalogueOptions = {}) {
    this.#list = list;
    this.#upstream = upstream;
    this.#onChanged = opts.onChanged ?? (() => {});
    this.#now = opts.now ?? Date.now;
  }

  get(kind: Kind): Promise<Catalogue> {
    let cached = this.#cached.get(kind);
    if (!cached) {
      cached = this.#fetch(kind);
      this.#cached.set(kind, cached);
      const mine = cached;
      mine.then(
        (c) => this.#cached.get(kind) === mine && this.#settle(kind, c),
        () => this.#cached.get(kind) === mine && this.#cached.delete(kind), // a failed listing is retried next time
      );
    } else if (this.#due(kind)) {
      // Answered from the cache meanwhile: a change found is told as list_changed, and the next request sees it.
      void this.#relist(kind).catch(() => {});
    }
    return cached;
  }

  /** In use, and listed longer ago than relist.intervalMs (an upstream may change without a word). */
  #due(kind: Kind): boolean {
    const every = this.#upstream().relist.intervalMs;
    const at = this.#settledAt.get(kind);
    return every > 0 && at !== undefined && !this.#relisting.has(kind) && this.#now() - at >= every;
  }

  #settle(kind: Kind, c: Catalogue): void {
    this.#settled.set(kind, c);
    this.#settledAt.set(kind, this.#now());
    if (kind === 'tools') this.tools = c;
  }

  /**
   * A listing of this instance passed on to a client. Complete (every item, one page): when it differs
   * from the catalogue, it becomes the catalogue, and the change is told as a list_changed would be.
   * One page of several: a page that shows what the catalogue does not hold has it listed afresh (bounded as findFor).
   */
  saw(kind: Kind, items: unknown, complete: boolean): void {
    const before = this.#settled.get(kind);
    if (complete) return void this.#replace(kind, byName(items));
    if (before === undefined) return;
    for (const [name, d] of byName(items)) {
      if (!isDeepStrictEqual(before.get(name), d)) return void this.#relistBounded(kind)?.catch(() => {});
    }
  }

  /** The catalogue listed anew: kept as it was when nothing changed, else replaced, and the change told (not the first listing). */
  #replace(kind: Kind, fresh: Catalogue): Catalogue {
    const before = this.#settled.get(kind);
    const kept = before !== undefined && sameCatalogue(before, fresh) ? before : fresh;
    this.#cached.set(kind, Promise.resolve(kept));
    this.#settle(kind, kept);
    if (before !== undefined && kept !== before) this.#onChanged(kind);
    return kept;
  }

  /**
   * The catalogue, listed afresh first when it does not hold `name`: an upstream may add a tool without
   * a list_changed. At most once per relist.unknownToolMs per instance (a flood of unknown names costs the
   * upstream one listing); a call that comes while one runs waits for it. A failed re-list answers from the cache.
   */
  async findFor(kind: Kind, name: string): Promise<Catalogue> {
    const catalogue = await this.get(kind);
    if (catalogue.has(name)) return catalogue;
    return (await this.#relistBounded(kind)?.catch(() => undefined)) ?? catalogue;
  }

  /**
   * A modern upstream refused a call of tool `name` for its Mcp-Param-* headers (-32020): the definition
   * they were mirrored from may be out of date (a parameter annotated since, with no list_changed). Listed
   * afresh, bounded as findFor; true when the tool's definition changed in its x-mcp-header annotations
   * alone, so that the call (checked against the old one, pins included) may be made again with fresh
   * headers. Any other change (a description, a schema) is the tool's pins' and policy's to judge first.
   */
  async headersChangedOnRelist(name: unknown): Promise<boolean> {
    const before = typeof name === 'string' ? this.#settled.get('tools')?.get(name) : undefined;
    if (before === undefined) return false;
    const after = (await this.#relistBounded('tools')?.catch(() => undefined))?.get(name as string);
    return after !== undefined && !isDeepStrictEqual(before, after) && isDeepStrictEqual(unannotated(before), unannotated(after));
  }

  #relistBounded(kind: Kind): Promise<Catalogue> | undefined {
    const running = this.#relisting.get(kind);
    if (running) return running;
    const last = this.#unknownAt.get(kind);
    if (last !== undefined && this.#now() - last < this.#upstream().relist.unknownToolMs) return undefined;
    this.#unknownAt.set(kind, this.#now());
    return this.#relist(kind);
  }

  #relist(kind: Kind): Promise<Catalogue> {
    this.#settledAt.set(kind, this.#now()); // a failed re-list waits its interval too: a failing upstream is not asked on every request
    const p = this.#fetch(kind).then((fresh) => this.#replace(kind, fresh));
    this.#relisting.set(kind, p);
    void p.finally(() => this.#relisting.get(kind) === p && this.#relisting.delete(kind)).catch(() => {});
    return p;
  }

  forget(kind: Kind): void {
    this.#cached.delete(kind);
  }

  /** A notification of the upstream's: a tools or prompts list_changed makes that kind listed afresh at next use. */
  heard(method: string): void {
    if (method === 'notifications/tools/list_changed') this.forget('tools');
    if (method === 'notifications/prompts/list_changed') this.forget('prompts');
  }

  /** A new process (a restart): nothing of the old one's listings is compared with or bounds it. */
  clear(): void {
    this.#cached.clear();
    this.#settled.clear();
    this.#settledAt.clear();
    this.#relisting.clear();
    this.#unknownAt.clear();
  }

  /**
   * Every page, kept: bounded in all as one answer is (maxResultBytes), not only page by page. Each page
   * alone was, and up to 1000 were kept: a server handing out cursors without end, each page just under
   * the limit, had the gateway hold gigabytes (per instance: per session with per-session) until it ran
   * out of memory. Past the bound the listing fails, as an answer over it does.
   */
  async #fetch(kind: Kind): Promise<Catalogue> {
    const names = new Map<string, Record<string, unknown>>();
    const { name, maxResultBytes: max } = this.#upstream();
    const method = `${kind}/list`;
    let bytes = 0;
    await forEachPage(
      async (cursor) => {
        const receipt: { resultBytes?: number | undefined } = {};
        const page = await this.#list(method, pageParams(cursor), receipt);
        bytes += receipt.resultBytes ?? JSON.stringify(page).length;
        if (bytes > max) throw new GatewayError('SWB_RESULT_TOO_LARGE', `upstream "${name}" sent ${method} pages of more than ${max} bytes together (maxResultBytes); its listing was given up`, { upstream: name, limit: max });
        return page;
      },
      (r) => void byName(r[kind], names),
      1000,
    );
    return names;
  }
}
