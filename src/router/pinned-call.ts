import { GatewayError } from '../errors.js';
import type { Catalogue, UpstreamInstance } from '../upstream/upstream-instance.js';
import type { UpstreamPool } from '../upstream/upstream-pool.js';
import { MAX_MARKS_PER_INSTANCE, TOO_MANY_WITHHELD } from '../upstream/withheld-listings.js';
import { hasName } from './names.js';
import { pinBlockText } from '../policy/pin-block.js';
import type { ToolBlock, ToolGate } from './tool-gate.js';

type Definition = Readonly<Record<string, unknown>>;
type Verdict = ToolBlock | undefined | Promise<ToolBlock | undefined>;

/**
 * Tool pinning's verdict on a call of `definition`, the tool as `inst`'s catalogue holds it. Per
 * upstream, not per instance: the call is refused too while any instance's latest listing of the tool
 * is withheld (see WithheldListings), since the instance called may not have listed since the upstream
 * changed the tool, or its catalogue may be older than its own latest listing. Synchronous when the gate knows every definition involved (every call but
 * the first, and no listing withheld: one lookup).
 */
export function pinVerdict(gate: ToolGate, pool: UpstreamPool, inst: UpstreamInstance, catalogue: Catalogue, definition: Definition): Verdict {
  const own = gate.check(pool.name, definition);
  if (!(own instanceof Promise)) return settle(gate, pool, inst, definition, own);
  // New to the gate, maybe a call before any list: the whole catalogue goes with it (same tick, one
  // batch), so that an upstream's first sighting is all of its tools, not this one alone.
  for (const d of catalogue.values()) if (d !== definition) void Promise.resolve(gate.check(pool.name, d)).catch(() => {});
  return own.then((block) => settle(gate, pool, inst, definition, block));
}

/**
 * pinVerdict as the call's refusal (SWB_TOOL_WITHHELD), if pinning refuses it: what the route throws, and
 * what a confirmation rule learns before it asks (a call pinning refuses is never put to the user).
 */
export function pinRefusal(gate: ToolGate, pool: UpstreamPool, inst: UpstreamInstance, catalogue: Catalogue, definition: Definition): GatewayError | undefined | Promise<GatewayError | undefined> {
  const block = pinVerdict(gate, pool, inst, catalogue, definition);
  return block instanceof Promise ? block.then(refusalOf) : refusalOf(block);
}

function refusalOf(block: ToolBlock | undefined): GatewayError | undefined {
  return block && new GatewayError('SWB_TOOL_WITHHELD', block.message, block.details);
}

/**
 * Pinning's refusal of a call by a curation rename, told by that name: the refusal names the tool by the
 * upstream's own name (what `pins approve` takes), which the rename keeps from the caller's view, as the
 * list, search and every other refusal do. The operator finds the tool with `pins list` by its hash.
 */
export function withheldAs(err: GatewayError, shown: string): GatewayError {
  const details = err.details ?? {};
  return new GatewayError('SWB_TOOL_WITHHELD', pinBlockText(details, shown), { ...details, tool: shown });
}

function settle(gate: ToolGate, pool: UpstreamPool, inst: UpstreamInstance, definition: Definition, block: ToolBlock | undefined): Verdict {
  const name = definition.name as string;
  if (block !== undefined) {
    pool.withheld.mark(inst, name, definition);
    return block;
  }
  // Not a clear of this instance's own mark: the definition that passed may be older than the one it
  // marks (a call that took the catalogue before a listing withheld a newer one and forgot it), and the
  // instance, and every other, would then run the newer unchecked. The mark goes when what it holds passes.
  const marks = pool.withheld.against(name, inst);
  return marks.length === 0 ? undefined : stillWithheld(gate, pool, name, marks);
}

/** The first of the withheld listings that is withheld still (an approval may have come since). */
async function stillWithheld(gate: ToolGate, pool: UpstreamPool, name: string, marks: ReadonlyArray<readonly [object, Definition]>): Promise<ToolBlock | undefined> {
  for (const [other, d] of marks) {
    if (!pool.instances.has(other as UpstreamInstance)) {
      pool.withheld.drop(other);
      continue;
    }
    const block = d === TOO_MANY_WITHHELD ? tooMany(pool.name, name) : await gate.check(pool.name, d);
    if (block !== undefined) return block;
    pool.withheld.clear(other, name);
  }
  return undefined;
}

function tooMany(upstream: string, tool: string): ToolBlock {
  return {
    message: `Tool "${tool}" of upstream "${upstream}" is withheld: an instance of the upstream listed more than ${MAX_MARKS_PER_INSTANCE} tools that tool pinning withholds, more than the gateway keeps track of, so this may be one it changed; calls are refused until that instance lists fewer or restarts (review the upstream)`,
    details: { upstream, tool, rule: 'pinning.limit' },
  };
}

/**
 * The tools of a tools/list page that tool pinning lets through, before names are prefixed. `complete`:
 * the page is the whole listing (a first page with no next one).
 */
export async function admitListing(gate: ToolGate, pool: UpstreamPool, inst: UpstreamInstance, page: Record<string, unknown>, complete: boolean): Promise<unknown[]> {
  const upstream = pool.name;
  const tools = page.tools as unknown[];
  // The gate sees a first listing as one set (what it pins without asking an operator), and the checks
  // made in one synchronous loop form that set. A paginated list shows only part of it, so the whole
  // catalogue (every page) is checked first, in one loop of its own.
  if (typeof page.nextCursor === 'string') {
    const all = await inst.catalogues.get('tools').catch(() => undefined);
    // Only to make the set complete: this page's own checks below decide what is listed.
    if (all) await Promise.all([...all.values()].map((t) => gate.check(upstream, t))).catch(() => {});
  }
  // Items without a usable name are not the gate's to judge: the router drops them (and says so).
  const verdicts: Array<ToolBlock | undefined | Promise<ToolBlock | undefined>> = tools.map((t) => (hasName(t) ? gate.check(upstream, t) : undefined));
  const settled = verdicts.some((v) => v instanceof Promise) ? await Promise.all(verdicts) : (verdicts as Array<ToolBlock | undefined>);
  noteListing(pool, inst, tools, settled, complete); // pinning decides per upstream: what one instance lists counts for all
  if (!settled.some((v) => v !== undefined)) return tools;
  // The instance's cached catalogue may predate this definition (no list_changed was sent): calls
  // must be checked against what this list saw.
  inst.catalogues.forget('tools');
  return tools.filter((_t, i) => settled[i] === undefined);
}

/**
 * What a list page showed of `inst`'s tools, and the gate's verdict on each (items without a name were
 * not judged). A complete listing replaces the instance's marks: a tool it no longer lists is no longer
 * one it withholds (an upstream naming a new tool on every list would otherwise pile them up).
 */
function noteListing(pool: UpstreamPool, inst: UpstreamInstance, tools: readonly unknown[], verdicts: ReadonlyArray<ToolBlock | undefined>, complete: boolean): void {
  // A name listed twice counts as its later listing says, as it did when each was noted in turn.
  const withheld = new Map<string, Definition>();
  const passed = new Set<string>();
  tools.forEach((t, i) => {
    const name = (t as Definition | null)?.name;
    if (typeof name !== 'string') return;
    if (verdicts[i] === undefined) {
      withheld.delete(name);
      passed.add(name);
    } else {
      passed.delete(name);
      withheld.set(name, t as Definition);
    }
  });
  if (complete) return pool.withheld.replace(inst, withheld);
  for (const name of passed) pool.withheld.clear(inst, name);
  for (const [name, definition] of withheld) pool.withheld.mark(inst, name, definition);
}
