import { pino, type DestinationStream } from 'pino';

/**
 * Where log lines go by default: stdout, written asynchronously by pino's own SonicBoom, in its byte
 * mode. Lines written while a write is in flight leave together in the next one, so a busy gateway (an
 * audit line per call) does not pay a write syscall per line; pino flushes what is left synchronously on
 * exit, and a closed stdout (EPIPE) stops logging instead of failing the process. maxLength: behind a
 * reader that stopped reading, lines are dropped past 16 MiB rather than held.
 *
 * Why bytes: in its default text mode SonicBoom appends each line to the pending string and then asks
 * for that string's UTF-8 length, which flattens the whole pending text on every line while a write is
 * in flight. Under load (64 calls in flight) that copying was 5.5 of the 37 kB a proxied call allocated.
 * In byte mode each line is encoded once and a batch is joined once, when it is written.
 */
export function stdoutDestination(): DestinationStream {
  const sonic = pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024, contentMode: 'buffer' });
  // SonicBoom's byte mode takes Buffers; pino hands its destination strings.
  const write = sonic.write.bind(sonic) as unknown as (bytes: Buffer) => boolean;
  return {
    write: (line: string) => void write(Buffer.from(line)),
    // logger.flush() reaches the stream through this.
    flush: (cb?: (err?: Error) => void) => sonic.flush(cb),
  } as DestinationStream;
}
