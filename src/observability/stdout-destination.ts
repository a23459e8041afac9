import { pino, type DestinationStream } from 'pino';

/** The key of a default destination's close (closeLogs in logger.ts): no other stream has it. */
export const CLOSE_LOGS = Symbol('switchboard.closeLogs');

/** The default log destination, and how to let what it holds out before the process exits. */
export interface StdoutDestination extends DestinationStream {
  /**
   * Resolves once every line written so far has reached stdout, or after `timeoutMs` (then what is left
   * is given up, so that nothing at exit waits on a reader that stopped reading). Logging ends here:
   * later lines are dropped.
   */
  [CLOSE_LOGS](timeoutMs: number): Promise<void>;
}

/**
 * Lines are held until this many bytes wait, or HOLD_MS after the first of them, and then leave in one
 * write. Without a hold a write went out as soon as the one before it finished, which under load was a
 * handful of lines each: every write is a round trip through libuv's thread pool (a worker wakes, writes,
 * signals the loop, a callback runs), and those round trips, not the line's JSON, were about half of what
 * the audit line cost a proxied call (bench:paired, Node 20, three gateways each: the gateway with the
 * audit line 1.60× the thin proxy's CPU per call, with it held 1.50×, with no line at all 1.37×). The price is
 * that a line can wait up to HOLD_MS before it reaches stdout, and a process killed outright (SIGKILL,
 * a crash) loses what is held with what is in flight.
 */
const HOLD_BYTES = 8 * 1024;
const HOLD_MS = 20;

/**
 * Where log lines go by default: stdout, written asynchronously by pino's own SonicBoom, in its byte
 * mode. Lines are held briefly (HOLD_BYTES, HOLD_MS) and lines written while a write is in flight leave
 * together in the next one, so a busy gateway (an audit line per call) does not pay a write per line or
 * per handful of lines; the write itself happens off the main thread, so a stalled reader never blocks
 * requests (past 16 MiB held, lines are dropped), and a closed stdout (EPIPE) ends logging, not the
 * process (pino's guard). pino writes what is queued synchronously at exit, but not a write already in
 * flight: an orderly exit closes the destination first, which waits for it.
 *
 * Why bytes: in its default text mode SonicBoom appends each line to the pending string and then asks
 * for that string's UTF-8 length, which flattens the whole pending text on every line while a write is
 * in flight. Under load (64 calls in flight) that copying was 5.5 of the 37 kB a proxied call allocated.
 * In byte mode each line is encoded once and the batch is joined when it is written (on Node 22.7 and
 * later SonicBoom copies the batch once more before an asynchronous write).
 */
export function stdoutDestination(): StdoutDestination {
  const sonic = pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024, contentMode: 'buffer', minLength: HOLD_BYTES });
  // The hold reads two of SonicBoom's own fields (a write in flight, the bytes waiting): a SonicBoom
  // without them holds nothing (every line written at once, as with no hold), rather than keeping lines
  // back for good.
  const internals = sonic as unknown as { _writing?: unknown; _len?: unknown; minLength: number };
  const holds = typeof internals._writing === 'boolean' && typeof internals._len === 'number';
  if (!holds) internals.minLength = 0;
  // What SonicBoom's byte mode installed: pino replaces it with a no-op once stdout is gone (EPIPE).
  const live = sonic.write;
  let closed: Promise<void> | undefined;
  // Lets out what is held below HOLD_BYTES once HOLD_MS have passed since the first line held. One timer,
  // re-armed by the first line after it fired (it runs once from its creation, with nothing to let out).
  // While a write is in flight SonicBoom's flush does nothing, and when that write ends it goes on only
  // above HOLD_BYTES: the timer then waits another HOLD_MS instead of leaving the rest held for good.
  let armed = true;
  const hold = setTimeout(() => {
    armed = false;
    if (!holds || closed || sonic.write !== live || internals._len === 0) return;
    if (internals._writing) {
      armed = true;
      hold.refresh();
      return;
    }
    sonic.flush();
  }, HOLD_MS);
  hold.unref();
  return {
    write(line: string): void {
      if (closed) return;
      // Looked up each time, so that pino's EPIPE guard takes effect; the byte mode takes Buffers.
      (sonic.write as unknown as (bytes: Buffer) => boolean)(Buffer.from(line));
      if (holds && !armed) {
        armed = true;
        hold.refresh();
      }
    },
    [CLOSE_LOGS](timeoutMs: number): Promise<void> {
      closed ??= new Promise<void>((resolve) => {
        if (sonic.write !== live) return resolve(); // stdout is gone (EPIPE): nothing can go out
        const timer = setTimeout(() => {
          // Given up: destroyed, so that pino's exit handler does not block on the same reader.
          sonic.destroy();
          resolve();
        }, timeoutMs);
        sonic.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        // end() waits for the write in flight and what is queued behind it; fd 1 itself stays open.
        sonic.end();
      });
      return closed;
    },
  };
}
