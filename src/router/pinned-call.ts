import type { Catalogue, UpstreamInstance } from '../upstream/upstream-instance.js';
import type { UpstreamPool } from '../upstream/upstream-pool.js';
import type { ToolBlock, ToolGate } from './tool-gate.js';

type Definition = Readonly<Record<string, unknown>>;
type Verdict = ToolBlock | undefined | Promise<ToolBlock | undefined>;

/**
 * Tool pinning's verdict on a call of `definition`, the tool as `inst`'s catalogue holds it. Per
 * upstream, not per instance: the call is refused too while another instance's latest listing of the
 * tool is withheld (see WithheldListings), since the instance called may not have listed since the
 * upstream changed the tool. Synchronous when the gate knows every definition involved (every call but
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

function settle(gate: ToolGate, pool: UpstreamPool, inst: UpstreamInstance, definition: Definition, block: ToolBlock | undefined): Verdict {
  const name = definition.name as string;
  if (block !== undefined) {
    pool.withheld.mark(inst, name, definition);
    return block;
  }
  pool.withheld.clear(inst, name);
  const others = pool.withheld.others(name, inst);
  return others.length === 0 ? undefined : elsewhere(gate, pool, name, others);
}

/** The first of other instances' withheld listings that is withheld still (an approval may have come since). */
async function elsewhere(gate: ToolGate, pool: UpstreamPool, name: string, others: Array<[object, Definition]>): Promise<ToolBlock | undefined> {
  for (const [other, d] of others) {
    const block = pool.instances.has(other as UpstreamInstance) ? await gate.check(pool.name, d) : undefined;
    if (block !== undefined) return block;
    pool.withheld.clear(other, name);
  }
  return undefined;
}

/** What a list page showed of `inst`'s tools, and the gate's verdict on each (items without a name were not judged). */
export function noteListing(pool: UpstreamPool, inst: UpstreamInstance, tools: readonly unknown[], verdicts: ReadonlyArray<ToolBlock | undefined>): void {
  tools.forEach((t, i) => {
    const name = (t as Definition | null)?.name;
    if (typeof name !== 'string') return;
    if (verdicts[i] === undefined) pool.withheld.clear(inst, name);
    else pool.withheld.mark(inst, name, t as Definition);
  });
}
