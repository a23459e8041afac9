import { sseEvent } from '../jsonrpc/sse.js';
import type { SseConnection } from './sse-connection.js';

/**
 * Logged events of stream `no` written to a resuming reader, in slices of `slice` characters (half the stream's
 * buffer bound), each waited on until the socket takes it: a log longer than the bound is a reader catching up,
 * not a slow one, and must not be cut for its length (it could then never be resumed). True when all went.
 */
export async function replayLog(conn: SseConnection, no: number, events: ReadonlyArray<{ seq: number; data: string }>, slice: number): Promise<boolean> {
  let since = 0;
  for (const e of events) {
    const text = sseEvent(e.data, `${no}_${e.seq}`);
    if (!conn.write(text, e.seq)) return false;
    since += text.length;
    if (since >= slice) {
      since = 0;
      if (!(await conn.drained())) return false;
    }
  }
  return conn.open;
}
