import { forEachPage, pageParams } from '../jsonrpc/paging.js';

/** An instance's tools or prompts: name → definition as the upstream reported it. */
export type Catalogue = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

type Kind = 'tools' | 'prompts';
type List = (method: string, params: Record<string, unknown> | undefined) => Promise<Record<string, unknown>>;

/**
 * What an instance offers, by name (all pages of tools/list or prompts/list), cached until the upstream
 * says its list changed or restarts. The tools' definitions are kept for tool pinning and header mirroring.
 */
export class InstanceCatalogues {
  readonly #list: List;
  readonly #cached = new Map<Kind, Promise<Catalogue>>();
  /** The tools as last listed (what a call's arguments are mirrored into headers by, for modern HTTP upstreams). */
  tools: Catalogue | undefined;

  constructor(list: List) {
    this.#list = list;
  }

  get(kind: Kind): Promise<Catalogue> {
    let cached = this.#cached.get(kind);
    if (!cached) {
      cached = this.#fetch(kind);
      this.#cached.set(kind, cached);
      if (kind === 'tools') void cached.then((c) => (this.tools = c), () => {});
      const mine = cached;
      mine.catch(() => this.#cached.get(kind) === mine && this.#cached.delete(kind)); // a failed listing is retried next time
    }
    return cached;
  }

  forget(kind: Kind): void {
    this.#cached.delete(kind);
  }

  clear(): void {
    this.#cached.clear();
  }

  async #fetch(kind: Kind): Promise<Catalogue> {
    const names = new Map<string, Record<string, unknown>>();
    await forEachPage(
      (cursor) => this.#list(`${kind}/list`, pageParams(cursor)),
      (r) => {
        for (const item of (r[kind] as Array<Record<string, unknown>> | undefined) ?? []) if (typeof item?.name === 'string') names.set(item.name, item);
      },
      1000,
    );
    return names;
  }
}
