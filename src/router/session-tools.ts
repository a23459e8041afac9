import type { Catalogue, UpstreamInstance, UpstreamPool } from '../upstream/index.js';
import type { ToolBlock, ToolGate } from './tool-gate.js';
import type { ViewTool } from './tool-view.js';

/**
 * Each upstream's tools as the session's own instances know them (cached by each instance until its
 * list changes). An upstream whose list fails is left out: its tools cannot be called now anyway.
 */
export async function gatherCatalogues(pools: readonly UpstreamPool[], instanceOf: (pool: UpstreamPool) => UpstreamInstance): Promise<Map<string, Catalogue>> {
  const settled = await Promise.allSettled(pools.map(async (p) => instanceOf(p).catalogue('tools')));
  const out = new Map<string, Catalogue>();
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') out.set(pools[i]!.name, s.value);
  });
  return out;
}

/** The tools tool pinning lets through (each definition checked as the upstream reported it). */
export async function admitByGate(gate: ToolGate | undefined, tools: readonly ViewTool[]): Promise<ViewTool[]> {
  if (!gate) return [...tools];
  const verdicts: Array<ToolBlock | undefined | Promise<ToolBlock | undefined>> = tools.map((t) => gate.check(t.upstream, t.raw));
  const settled = verdicts.some((v) => v instanceof Promise) ? await Promise.all(verdicts) : (verdicts as Array<ToolBlock | undefined>);
  return tools.filter((_t, i) => settled[i] === undefined);
}
