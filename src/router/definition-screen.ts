import type { ListSpec } from '../jsonrpc/methods.js';

/** What a screen judges: the definitions a client reads before it calls anything. */
export type ScreenedKind = 'tool' | 'prompt' | 'template' | 'resource' | 'instructions';

/**
 * A check of each tool, prompt, resource and resource-template definition an upstream reports, before a client
 * sees or calls it (hidden-text scanning: src/policy/hidden-text-policy.ts). Per request, for the
 * caller's tenant: the route stage hands it over in the RouteContext, undefined when scanning of
 * definitions is off, so that the router asks nothing then.
 */
export interface DefinitionScreen {
  /** What clients are shown: the definition itself, a clean copy, or undefined (withheld: left out of lists, calls refused as unknown). */
  show(kind: ScreenedKind, upstream: string, definition: Record<string, unknown>): Record<string, unknown> | undefined;
  /**
   * Whether a list withheld this template (by its uriTemplate): completion/complete on it is refused as
   * unknown. undefined: no list has shown it to this screen yet (the router lists the templates then).
   */
  withholds(upstream: string, uriTemplate: string): boolean | undefined;
  /** The audit rule a refused call is recorded with. */
  readonly rule: string;
}

/** The lists whose items a screen judges, and what their items are. */
// resources/list too: a host gives a model the list to pick from (before 2026-12-06 its items were not screened).
export const SCREENED: Partial<Record<ListSpec['key'], ScreenedKind>> = { tools: 'tool', prompts: 'prompt', resourceTemplates: 'template', resources: 'resource' };

/** A list item as the screen lets clients see it (undefined: withheld); what is not an object is left as it is (the router drops it). */
export function screenItem(screen: DefinitionScreen, kind: ScreenedKind, upstream: string, item: unknown): unknown {
  return item !== null && typeof item === 'object' && !Array.isArray(item) ? screen.show(kind, upstream, item as Record<string, unknown>) : item;
}

/**
 * An upstream's instructions as the screen lets clients see them: a host puts them in the model's system
 * prompt, so they are a definition like a tool's description (before 2026-12-06 they went out unscanned).
 * undefined: withheld (block).
 */
export function screenInstructions(screen: DefinitionScreen, upstream: string, text: string): string | undefined {
  const shown = screen.show('instructions', upstream, { name: 'instructions', instructions: text });
  return typeof shown?.instructions === 'string' ? shown.instructions : undefined;
}
