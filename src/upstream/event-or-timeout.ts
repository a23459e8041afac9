import type { EventEmitter } from 'node:events';

/**
 * Resolves when `emitter` emits `event` or after `ms`, whichever comes first. Both ends let go: a wait
 * that times out must not leave its listener behind (a retry given up during a long outage left one each).
 */
export function eventOrTimeout(emitter: EventEmitter, event: string, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => (clearTimeout(timer), emitter.off(event, done), resolve());
    const timer = setTimeout(done, ms);
    emitter.once(event, done);
  });
}
