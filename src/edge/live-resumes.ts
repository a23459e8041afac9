import type { ServerResponse } from 'node:http';
import type { SseConnection } from './sse-connection.js';

/**
 * One live resume per stream of a session. A client resumes a stream again only once it has given up on
 * its last resume, so the newer one replaces the older (as a newer reader of a live stream takes it over).
 * Kept side by side, a session could open any number of GETs resuming one answered stream (each holding its
 * own copy of the answer, up to its size, for a reader that does not read) or one not held here (each up to
 * half the buffer bound in replay): GETs are not charged to the tenant's rate, so only the connection cap bounded them.
 */
export class LiveResumes {
  readonly #byStream = new Map<number, SseConnection>();

  /** `conn` is now the resume of stream `no`: the older one is dropped, queued bytes and all. */
  take(no: number, conn: SseConnection, res: ServerResponse): SseConnection {
    this.#byStream.get(no)?.drop();
    this.#byStream.set(no, conn);
    res.once('close', () => {
      if (this.#byStream.get(no) === conn) this.#byStream.delete(no);
    });
    return conn;
  }
}
