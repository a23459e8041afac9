import { GatewayError } from '../errors.js';
import { forEachPage, pageParams } from '../jsonrpc/paging.js';

/** An instance's tools or prompts: name → definition as the upstream reported it. */
export type Catalogue = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

type Kind = 'tools' | 'prompts';
/** One page's request; `receipt` is where the answer's size on the wire is written (see OutgoingOptions). */
type List = (method: string, params: Record<string, unknown> | undefined, receipt: { resultBytes?: number | undefined }) => Promise<Record<string, unknown>>;

/**
 * What an instance offers, by name (all pages of tools/list or prompts/list), cached until the upstream
 * says its list changed or restarts. The tools' definitions are kept for tool pinning and header mirroring.
 */
export class InstanceCatalogues {
  readonly #list: List;
  /** The upstream's name, and the most all of one catalogue's pages may weigh on the wire (its maxResultBytes). */
  readonly #upstream: () => { name: string; maxResultBytes: number };
  readonly #cached = new Map<Kind, Promise<Catalogue>>();
  /** The tools as last listed (what a call's arguments are mirrored into headers by, for modern HTTP upstreams). */
  tools: Catalogue | undefined;

  constructor(list: List, upstream: () => { name: string; maxResultBytes: number }) {
    this.#list = list;
    this.#upstream = upstream;
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

  /**
   * Every page, kept: bounded in all as one answer is (maxResultBytes), not only page by page. Each page
   * alone was, and up to 1000 were kept: a server handing out cursors without end, each page just under
   * the limit, had the gateway hold gigabytes (per instance: per session with per-session) until it ran
   * out of memory. Past the bound the listing fails, as an answer over it does.
   */
  async #fetch(kind: Kind): Promise<Catalogue> {
    const names = new Map<string, Record<string, unknown>>();
    const { name, maxResultBytes: max } = this.#upstream();
    const method = `${kind}/list`;
    let bytes = 0;
    await forEachPage(
      async (cursor) => {
        const receipt: { resultBytes?: number | undefined } = {};
        const page = await this.#list(method, pageParams(cursor), receipt);
        bytes += receipt.resultBytes ?? JSON.stringify(page).length;
        if (bytes > max) throw new GatewayError('SWB_RESULT_TOO_LARGE', `upstream "${name}" sent ${method} pages of more than ${max} bytes together (maxResultBytes); its listing was given up`, { upstream: name, limit: max });
        return page;
      },
      (r) => {
        for (const item of (r[kind] as Array<Record<string, unknown>> | undefined) ?? []) if (typeof item?.name === 'string') names.set(item.name, item);
      },
      1000,
    );
    return names;
  }
}
