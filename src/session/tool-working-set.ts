import { prefixed } from '../router/names.js';

/** At most this many found tools are kept: past it the tools found longest ago make room (a list must stay small). */
const MAX_TOOLS = 64;

/** A found tool as the set knows it: its upstream and the upstream's own name, not the name it is exposed by. */
export interface FoundTool {
  readonly upstream: string;
  readonly tool: string;
  /** The exposed name: what a record written before the set held identities holds (see has). */
  readonly name: string;
}

/**
 * A tool's upstream identity, "<upstream>__<tool>" whether the endpoint prefixes or not: what curation,
 * shortening and a change of prefixing never change, so a reload that renames a found tool keeps it found
 * (keyed by the exposed name, the set lost it). Upstream names never hold "__": the key is unambiguous.
 */
function identity(t: FoundTool): string {
  return prefixed(t.upstream, t.tool);
}

/**
 * search+working-set: the tools a 2025 session found with search_tools, listed beside the meta-tools
 * from then on. The session is told its list grew (notifications/tools/list_changed) and its record
 * carries their identities, so a replica that takes the session over lists the same tools.
 */
export class ToolWorkingSet {
  readonly #keys = new Set<string>();
  readonly #grew: () => void;

  constructor(grew: () => void) {
    this.#grew = grew;
  }

  /** What the session's record says it had found (a takeover): no announcement, the client knows its list. */
  restore(keys: readonly string[]): void {
    for (const k of keys.slice(-MAX_TOOLS)) this.#keys.add(k);
  }

  /** Whether the session found this tool (or, in a record from a replica that kept exposed names, its name). */
  has(t: FoundTool): boolean {
    return this.#keys.has(identity(t)) || this.#keys.has(t.name);
  }

  /** What the session's record keeps. */
  get keys(): string[] {
    return [...this.#keys];
  }

  /**
   * Adds what a search found; tells the session when its list changed. A tool found again becomes the
   * newest (the set's order is the order of finds), which changes nothing listed: a session that keeps
   * finding a tool keeps it, over one it found once and longer ago.
   */
  add(found: readonly FoundTool[]): void {
    let changed = false;
    for (const t of found) {
      const key = identity(t);
      if (this.#keys.delete(key)) {
        this.#keys.add(key);
        continue;
      }
      this.#keys.add(key);
      changed = true;
      if (this.#keys.size > MAX_TOOLS) this.#keys.delete(this.#keys.values().next().value!);
    }
    if (changed) this.#grew();
  }
}
