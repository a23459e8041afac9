import type { Readable } from 'node:stream';

/** A read at least this large says the pipe was full: the writer writes faster than the gateway reads. */
const YIELD_BYTES = 16 * 1024;

/**
 * A child's pipe read one chunk per turn of the event loop while it is full. libuv reads a readable pipe up
 * to 32 times (64 KiB each) before it looks at anything else, and each chunk is split and handled at once:
 * a server writing empty lines, or valid notifications, as fast as its pipe took them held the event loop,
 * every session's, for a second and more at a time (its stderr a quarter of one). Paused after a large
 * chunk, the pipe fills and the server waits (as on a slow terminal) while the gateway serves the others.
 * A small chunk, a server's usual answer, costs nothing more.
 */
export function readByTurns(stream: Readable, push: (chunk: Buffer) => void): void {
  const resume = (): void => void stream.resume();
  // long-lived: one listener per pipe
  stream.on('data', (chunk: Buffer) => {
    push(chunk);
    if (chunk.length < YIELD_BYTES) return;
    stream.pause();
    setImmediate(resume);
  });
}
