/** At most this many found tools are kept: past it the tools found longest ago make room (a list must stay small). */
const MAX_TOOLS = 64;

/**
 * search+working-set: the tools a 2025 session found with search_tools, listed beside the meta-tools
 * from then on. The session is told its list grew (notifications/tools/list_changed) and its record
 * carries the names, so a replica that takes the session over lists the same tools.
 */
export class ToolWorkingSet {
  readonly #names = new Set<string>();
  readonly #grew: () => void;

  constructor(grew: () => void) {
    this.#grew = grew;
  }

  /** What the session's record says it had found (a takeover): no announcement, the client knows its list. */
  restore(names: readonly string[]): void {
    for (const n of names.slice(-MAX_TOOLS)) this.#names.add(n);
  }

  has(name: string): boolean {
    return this.#names.has(name);
  }

  get names(): string[] {
    return [...this.#names];
  }

  /**
   * Adds what a search found; tells the session when its list changed. A tool found again becomes the
   * newest (the set's order is the order of finds), which changes nothing listed: a session that keeps
   * finding a tool keeps it, over one it found once and longer ago.
   */
  add(found: readonly string[]): void {
    let changed = false;
    for (const name of found) {
      if (this.#names.delete(name)) {
        this.#names.add(name);
        continue;
      }
      this.#names.add(name);
      changed = true;
      if (this.#names.size > MAX_TOOLS) this.#names.delete(this.#names.values().next().value!);
    }
    if (changed) this.#grew();
  }
}
