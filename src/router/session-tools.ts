import type { Catalogue, UpstreamInstance, UpstreamPool } from '../upstream/index.js';
import type { ToolBlock, ToolGate } from './tool-gate.js';
import type { ViewTool } from './tool-view.js';

/** Each upstream's tools, and the instance that listed them (what keeps a view of them live: see ViewCache). */
export interface Gathered {
  catalogues: Map<string, Catalogue>;
  sources: Map<string, UpstreamInstance>;
  /** Why each upstream that could not list its tools could not, in the endpoint's order (what failureMode closed fails with). */
  failures: Map<string, unknown>;
}

/**
 * Each upstream's tools as the session's own instances know them (cached by each instance until its
 * list changes). An upstream whose list fails is left out: its tools cannot be called now anyway.
 * `waitFor`: the upstreams whose listing is waited for (all when absent); any other is taken only when
 * its catalogue is at hand, else left out while its listing goes on for a later request. A call needs
 * its own upstream's tools, not a slow listing of another's (see RouterSession.toolView).
 */
export async function gatherCatalogues(pools: readonly UpstreamPool[], instanceOf: (pool: UpstreamPool) => UpstreamInstance, waitFor?: (pool: UpstreamPool) => boolean): Promise<Gathered> {
  const instances: UpstreamInstance[] = [];
  const settled = await Promise.allSettled(
    // async: an upstream with no instance to give (none running) is that upstream's failure, not the whole view's.
    pools.map(async (p, i) => {
      const listing = (instances[i] = instanceOf(p)).catalogues.get('tools');
      if (waitFor === undefined || waitFor(p)) return listing;
      listing.catch(() => {});
      // A listing already settled wins the race: its reaction is queued before the placeholder's.
      return Promise.race([listing, Promise.resolve(undefined)]);
    }),
  );
  const out: Gathered = { catalogues: new Map(), sources: new Map(), failures: new Map() };
  settled.forEach((s, i) => {
    if (s.status === 'rejected') out.failures.set(pools[i]!.name, s.reason);
    if (s.status !== 'fulfilled' || s.value === undefined) return;
    out.catalogues.set(pools[i]!.name, s.value);
    out.sources.set(pools[i]!.name, instances[i]!);
  });
  return out;
}

/**
 * The tools tool pinning lets through (each definition checked as the upstream reported it). The gate
 * pins an upstream's first sighting without asking an operator: the checks made in one synchronous loop.
 * `tools` may be a part of the catalogue (one search's matches, what one tenant's policy or curation
 * admits), so when any of them is new to the gate, every tool of every upstream in `catalogues` (as
 * listed, before curation) is checked in the same loop: the first sighting is the whole catalogue, not
 * whichever part a first caller happened to ask about (the rest would be withheld from everyone).
 */
export async function admitByGate(gate: ToolGate | undefined, tools: readonly ViewTool[], catalogues?: ReadonlyMap<string, ReadonlyMap<string, Record<string, unknown>>>): Promise<ViewTool[]> {
  if (!gate) return [...tools];
  const verdicts: Array<ToolBlock | undefined | Promise<ToolBlock | undefined>> = tools.map((t) => gate.check(t.upstream, t.raw));
  const pending = verdicts.some((v) => v instanceof Promise);
  if (pending && catalogues) {
    // Only to make the set complete: the verdicts above decide what is admitted.
    for (const [upstream, catalogue] of catalogues) for (const d of catalogue.values()) void Promise.resolve(gate.check(upstream, d)).catch(() => {});
  }
  const settled = pending ? await Promise.all(verdicts) : (verdicts as Array<ToolBlock | undefined>);
  return tools.filter((_t, i) => settled[i] === undefined);
}

/**
 * A called name the view lacks: when its upstream's catalogue lacks it too, that catalogue is listed
 * afresh (InstanceCatalogues.findFor: bounded per instance). Whether that changed it (the view is then built again).
 */
export async function relistedFor(inst: UpstreamInstance, name: string): Promise<boolean> {
  const before = await inst.catalogues.get('tools').catch(() => undefined);
  if (before === undefined || before.has(name)) return false;
  return (await inst.catalogues.findFor('tools', name).catch(() => before)) !== before;
}
