type Definition = Readonly<Record<string, unknown>>;

/**
 * The most withheld listings kept per instance. Twice what the pin store records per upstream (1000
 * names: src/policy/pin-store.ts), so an upstream within the store's bounds never reaches it. Beyond it
 * an upstream is naming tools by the thousand (a new name on every list, say), and keeping each one,
 * its whole definition, for the instance's life would hold memory without bound.
 */
export const MAX_MARKS_PER_INSTANCE = 2000;

/**
 * What against() answers, as the definition, for an instance that withheld more tools than
 * MAX_MARKS_PER_INSTANCE: its marks were let go, so any tool may be one it withheld.
 */
export const TOO_MANY_WITHHELD: Definition = Object.freeze({});

const NONE: ReadonlyArray<readonly [object, Definition]> = Object.freeze([]);

/**
 * The tool definitions an upstream's instances last listed that tool pinning withheld (a changed or
 * new definition not approved), per tool name and instance. Pinning decides per upstream, not per
 * instance: one instance listing a changed definition means the upstream changed it, and another
 * instance that has not listed since (its catalogue still holds the approved one) must not run it. So a
 * call through any instance is checked against these too (src/router/pinned-call.ts). An instance's
 * mark goes when its own later listing of the tool passes, or leaves the tool out (a complete listing
 * replaces the instance's marks), when the definition marked passes (an approval), or when the instance
 * goes; not when a call passes another definition of the tool (one from before the listing).
 */
export class WithheldListings {
  readonly #byName = new Map<string, Map<object, Definition>>();
  /** The names each instance has marks for: what replace and drop undo, without a walk of every name. */
  readonly #byInstance = new Map<object, Set<string>>();
  /**
   * Instances past MAX_MARKS_PER_INSTANCE. Dropping a few marks to make room would let the upstream
   * push out the one that matters (a changed tool) with a flood of new names, so their calls elsewhere
   * are refused instead, each tool, until a complete listing of theirs withholds fewer (or they go).
   */
  readonly #overflowing = new Set<object>();

  /** Marks held, over every name and instance. */
  get size(): number {
    let n = 0;
    for (const names of this.#byInstance.values()) n += names.size;
    return n;
  }

  /** `instance`'s latest listing of `name` was withheld. */
  mark(instance: object, name: string, definition: Definition): void {
    if (this.#overflowing.has(instance)) return;
    let names = this.#byInstance.get(instance);
    if (!names) this.#byInstance.set(instance, (names = new Set()));
    if (!names.has(name) && names.size >= MAX_MARKS_PER_INSTANCE) {
      this.#forget(instance);
      this.#overflowing.add(instance);
      return;
    }
    names.add(name);
    let marks = this.#byName.get(name);
    if (!marks) this.#byName.set(name, (marks = new Map()));
    marks.set(instance, definition);
  }

  /** `instance`'s latest listing of `name` passed. */
  clear(instance: object, name: string): void {
    const marks = this.#byName.get(name);
    if (marks?.delete(instance) && marks.size === 0) this.#byName.delete(name);
    const names = this.#byInstance.get(instance);
    if (names?.delete(name) && names.size === 0) this.#byInstance.delete(instance);
  }

  /** A complete listing by `instance` (every tool it has): what it withheld is all it withholds now. */
  replace(instance: object, withheld: ReadonlyMap<string, Definition>): void {
    this.drop(instance);
    for (const [name, definition] of withheld) this.mark(instance, name, definition);
  }

  /**
   * The withheld listings a call of `name` through `instance` is checked against (none: the common
   * case, one lookup): every instance's, its own included, since the catalogue the call holds may be
   * older than its latest listing; and every other instance past MAX_MARKS_PER_INSTANCE (its own calls
   * are judged by its catalogue, which a withholding listing made it fetch afresh).
   */
  against(name: string, instance: object): ReadonlyArray<readonly [object, Definition]> {
    const marks = this.#byName.get(name);
    // Asked on every pinned call: nothing withheld (nearly always) costs no allocation.
    if (marks === undefined && this.#overflowing.size === 0) return NONE;
    const found: Array<[object, Definition]> = marks === undefined ? [] : [...marks];
    for (const i of this.#overflowing) if (i !== instance) found.push([i, TOO_MANY_WITHHELD]);
    return found;
  }

  /** The instance is gone: its listings withhold nothing any more. */
  drop(instance: object): void {
    this.#forget(instance);
    this.#overflowing.delete(instance);
  }

  #forget(instance: object): void {
    for (const name of [...(this.#byInstance.get(instance) ?? [])]) this.clear(instance, name);
  }
}
