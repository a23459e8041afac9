import type { EventEmitter } from 'node:events';

/**
 * Resolves when `emitter` emits `event`, after `ms`, or once `signal` aborts, whichever comes first. Every
 * end lets go: a wait that times out must not leave its listener behind (a retry given up during a long
 * outage left one each).
 */
export function eventOrTimeout(emitter: EventEmitter, event: string, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => (clearTimeout(timer), emitter.off(event, done), signal?.removeEventListener('abort', done), resolve());
    const timer = setTimeout(done, ms);
    emitter.once(event, done);
    if (signal?.aborted) done();
    else signal?.addEventListener('abort', done, { once: true });
  });
}
