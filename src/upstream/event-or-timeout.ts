import type { EventEmitter } from 'node:events';
import type { Cancellation } from '../jsonrpc/cancellation.js';

/**
 * Resolves when `emitter` emits `event`, after `ms`, or once `signal` aborts or the request waiting is
 * cancelled (`cancel`: a client's notifications/cancelled, its disconnect), whichever comes first. Every
 * end lets go: a wait that times out must not leave its listener behind (a retry given up during a long
 * outage left one each). Without `cancel`, a retry waiting for a restart held its cancelled request (and
 * the client's slots) until the restart or initTimeoutMs.
 */
export function eventOrTimeout(emitter: EventEmitter, event: string, ms: number, signal?: AbortSignal, cancel?: Cancellation): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => (clearTimeout(timer), emitter.off(event, done), signal?.removeEventListener('abort', done), cancel?.offAbort(done), resolve());
    const timer = setTimeout(done, ms);
    emitter.once(event, done);
    if (signal?.aborted || cancel?.aborted) return done();
    signal?.addEventListener('abort', done, { once: true });
    cancel?.onAbort(done);
  });
}

/** Resolves once `p` settles (either way), or once `cancel` is cancelled: a cancelled request waits for nothing. */
export function settledOrCancelled(p: Promise<unknown>, cancel: Cancellation | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => (cancel?.offAbort(done), resolve());
    void p.then(done, done);
    if (cancel?.aborted) done();
    else cancel?.onAbort(done);
  });
}
