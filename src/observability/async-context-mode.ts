import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whether AsyncLocalStorage runs on async hooks in this process: Node 22 without
 * `--experimental-async-context-frame` (Node 24 uses async context frames by default and refuses the
 * flag). The OpenTelemetry context manager keeps a traced request's span in AsyncLocalStorage, and on
 * hooks every promise the process creates pays for it once one context has been entered. Measured in
 * one alternation (bench:paired, Node 22.23, three gateways each): tracing unsampled 1.32× the untraced
 * CPU per call on hooks, 1.20× with the flag; every call sampled 1.62× and 1.56×. Read from the class
 * itself: the hook-based one has `_propagate`, which the frame-based one has no use for.
 */
export function asyncContextOnHooks(als: object = AsyncLocalStorage.prototype): boolean {
  return '_propagate' in als;
}

/** What an operator is told when tracing starts on hook-based AsyncLocalStorage. */
export const HOOKED_CONTEXT_NOTE =
  'tracing: AsyncLocalStorage runs on async hooks in this Node.js (as Node.js 22 does without --experimental-async-context-frame), which makes every traced call dearer (measured: 5-12 % of the CPU of an untraced call); start Node.js 22.7 or later with --experimental-async-context-frame (the image sets it in NODE_OPTIONS), or run Node.js 24';
