import { listChangedNotifications } from '../jsonrpc/methods.js';

const LIST_CHANGED: ReadonlySet<string> = new Set(listChangedNotifications());

/**
 * How long the first list_changed of a kind waits for more of the same. A restarted server-everything
 * sends a burst of five or six tools/list_changed within about 15 ms (the gateway's own "it restarted", then
 * one per tool it registers once initialized); a quarter second folds such a burst with a wide margin
 * on a loaded machine, and is a delay no one waiting for a changed list notices.
 */
export const LIST_CHANGED_WINDOW_MS = 250;

/** Runs `fn` after `ms`; the function returned cancels it. Injected by tests. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const realTimers: Schedule = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

/**
 * One session's list_changed notifications, at most one of each kind per window: the first of a kind
 * opens a window, everything of that kind within it is folded into one notification sent when it
 * closes. The window is fixed from its first notification (a steady stream cannot hold it open), and
 * a change after it opens a new one, so the last change is always announced. A notification says only
 * "list again": the client loses nothing by hearing it once, after the burst, when the list is whole.
 */
export class ListChangedCoalescer {
  readonly #send: (method: string, params: Record<string, unknown> | undefined) => void;
  readonly #windowMs: number;
  readonly #schedule: Schedule;
  /** Kinds whose window is open → cancel, and the params of the latest of them. */
  readonly #open = new Map<string, { cancel: () => void; params: Record<string, unknown> | undefined }>();

  constructor(send: (method: string, params: Record<string, unknown> | undefined) => void, o: { windowMs?: number; schedule?: Schedule } = {}) {
    this.#send = send;
    this.#windowMs = o.windowMs ?? LIST_CHANGED_WINDOW_MS;
    this.#schedule = o.schedule ?? realTimers;
  }

  /** True when `method` is a list_changed, taken care of here; false: the caller sends it as usual. */
  offer(method: string, params: Record<string, unknown> | undefined): boolean {
    if (!LIST_CHANGED.has(method)) return false;
    const open = this.#open.get(method);
    if (open) {
      open.params = params;
      return true;
    }
    const window = {
      params,
      cancel: this.#schedule(() => {
        this.#open.delete(method);
        this.#send(method, window.params);
      }, this.#windowMs),
    };
    this.#open.set(method, window);
    return true;
  }

  /** The session ended: nothing more is sent. */
  close(): void {
    for (const w of this.#open.values()) w.cancel();
    this.#open.clear();
  }
}
