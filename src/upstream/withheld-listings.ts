type Definition = Readonly<Record<string, unknown>>;

/**
 * The tool definitions an upstream's instances last listed that tool pinning withheld (a changed or
 * new definition not approved), per tool name and instance. Pinning decides per upstream, not per
 * instance: one instance listing a changed definition means the upstream changed it, and another
 * instance that has not listed since (its catalogue still holds the approved one) must not run it. So a
 * call through any instance is checked against these too (src/router/pinned-call.ts). An instance's
 * mark goes when its own later listing of the tool passes, or when the instance goes.
 */
export class WithheldListings {
  readonly #byName = new Map<string, Map<object, Definition>>();

  /** `instance`'s latest listing of `name` was withheld. */
  mark(instance: object, name: string, definition: Definition): void {
    let marks = this.#byName.get(name);
    if (!marks) this.#byName.set(name, (marks = new Map()));
    marks.set(instance, definition);
  }

  /** `instance`'s latest listing of `name` passed. */
  clear(instance: object, name: string): void {
    const marks = this.#byName.get(name);
    if (marks?.delete(instance) && marks.size === 0) this.#byName.delete(name);
  }

  /** The withheld listings of `name` by instances other than `instance` (none: the common case, one lookup). */
  others(name: string, instance: object): Array<[object, Definition]> {
    const marks = this.#byName.get(name);
    return marks === undefined ? [] : [...marks].filter(([i]) => i !== instance);
  }

  /** The instance is gone: its listings withhold nothing any more. */
  drop(instance: object): void {
    for (const name of [...this.#byName.keys()]) this.clear(instance, name);
  }
}
