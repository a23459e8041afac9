import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { Cancellation } from '../jsonrpc/cancellation.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';

/**
 * Waiting for a 2025 client to say notifications/initialized: until then the spec lets the server send it
 * only pings and logs, and the requests it sends first may wait for it a little.
 */
export class ActiveWait {
  /** Resolves when the client has said notifications/initialized. */
  readonly #active: Promise<void>;
  #activate!: () => void;
  #isActive = false;

  constructor() {
    this.#active = new Promise((resolve) => (this.#activate = resolve));
  }

  activate(): void {
    this.#isActive = true;
    this.#activate();
  }

  /** True once the client is active; false if it did not become so within `ms`. */
  within(ms: number): Promise<boolean> {
    if (this.#isActive) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.#active.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /**
   * A request the gateway sends the client is held until the client is active, within its timeout
   * `timeoutMs`. Resolves with the part of the timeout left; rejects when it ran out or `signal` fired.
   */
  async forRequest(timeoutMs: number, signal: Cancellation): Promise<number> {
    const started = Date.now();
    if (!signal.aborted) {
      let stop!: () => void;
      const timer = setTimeout(() => stop(), timeoutMs);
      await Promise.race([this.#active, new Promise<void>((resolve) => signal.onAbort((stop = resolve)))]);
      clearTimeout(timer);
      signal.offAbort(stop);
    }
    const left = timeoutMs - (Date.now() - started);
    if (signal.aborted || left <= 0 || !this.#isActive) throw new JsonRpcError(ErrorCode.InternalError, 'the client session did not become active in time');
    return left;
  }
}
