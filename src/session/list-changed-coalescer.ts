import { listChangedNotifications } from '../jsonrpc/methods.js';

const LIST_CHANGED: ReadonlySet<string> = new Set(listChangedNotifications());

/**
 * How long a list_changed of a kind waits for another of the same. A restarted server-everything sends
 * a burst of five or six tools/list_changed (the gateway's own "it restarted", then one per tool it
 * registers once initialized): about 15 ms apart on an idle machine, stretched on a loaded one.
 */
export const LIST_CHANGED_WINDOW_MS = 250;

/** The longest a window stays open from its first change, however many keep coming. */
export const LIST_CHANGED_MAX_MS = 1000;

/** Runs `fn` after `ms`; the function returned cancels it. Injected by tests. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const realTimers: Schedule = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

interface Window {
  cancel: () => void;
  /** The params of the latest change of the kind. */
  params: Record<string, unknown> | undefined;
  /** When its first change came. */
  opened: number;
}

/**
 * One session's list_changed notifications, folded per kind: the first of a kind opens a window, and
 * the window closes when LIST_CHANGED_WINDOW_MS pass without another of that kind, or at the latest
 * LIST_CHANGED_MAX_MS after it opened (a steady stream cannot hold it open); then one notification is
 * sent. A change after that opens a new window, so the last change is always announced. A notification
 * says only "list again": the client loses nothing by hearing it once, after the burst, when the list is
 * whole. A quiet period rather than a fixed window folds a burst that a loaded machine stretched past it.
 */
export class ListChangedCoalescer {
  readonly #send: (method: string, params: Record<string, unknown> | undefined) => void;
  readonly #windowMs: number;
  readonly #maxMs: number;
  readonly #schedule: Schedule;
  readonly #now: () => number;
  /** Kinds whose window is open. */
  readonly #open = new Map<string, Window>();
  /** The list_changed methods the session was offered (declare); undefined: every kind (nothing was declared). */
  #declared: ReadonlySet<string> | undefined;

  constructor(send: (method: string, params: Record<string, unknown> | undefined) => void, o: { windowMs?: number; maxMs?: number; schedule?: Schedule; now?: () => number } = {}) {
    this.#send = send;
    this.#windowMs = o.windowMs ?? LIST_CHANGED_WINDOW_MS;
    this.#maxMs = o.maxMs ?? LIST_CHANGED_MAX_MS;
    this.#schedule = o.schedule ?? realTimers;
    this.#now = o.now ?? (() => performance.now());
  }

  /**
   * The capabilities the session was offered (a 2025 initialize answer), returned as given. A list_changed
   * of a kind they do not declare with listChanged is dropped from then on: MCP servers send one only for a
   * kind they declared so (a reload or an upstream would otherwise tell a client of prompts it never had).
   */
  declare(caps: Record<string, unknown>): Record<string, unknown> {
    const kinds = ['tools', 'prompts', 'resources'].filter((k) => (caps[k] as { listChanged?: unknown } | undefined)?.listChanged === true);
    this.#declared = new Set(kinds.map((k) => `notifications/${k}/list_changed`));
    return caps;
  }

  /** True when `method` is a list_changed, taken care of here (or dropped, undeclared); false: the caller sends it as usual. */
  offer(method: string, params: Record<string, unknown> | undefined): boolean {
    if (!LIST_CHANGED.has(method)) return false;
    if (this.#declared && !this.#declared.has(method)) return true;
    const now = this.#now();
    const open = this.#open.get(method);
    if (open) {
      open.params = params;
      open.cancel();
      open.cancel = this.#schedule(() => this.#close(method), Math.max(0, Math.min(this.#windowMs, open.opened + this.#maxMs - now)));
      return true;
    }
    this.#open.set(method, { params, opened: now, cancel: this.#schedule(() => this.#close(method), this.#windowMs) });
    return true;
  }

  #close(method: string): void {
    const window = this.#open.get(method);
    if (!window) return;
    this.#open.delete(method);
    this.#send(method, window.params);
  }

  /** The session ended: nothing more is sent. */
  close(): void {
    for (const w of this.#open.values()) w.cancel();
    this.#open.clear();
  }
}
