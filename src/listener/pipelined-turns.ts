import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Requests a connection may have unanswered (pipelined, the one being answered included) before it is closed. */
export const MAX_PIPELINED = 4;

/** Per connection: its requests not answered yet, and the end of the last one's turn. */
interface Turns {
  waiting: number;
  last: Promise<void>;
}

/** Resolves once `res` is written out to the kernel (or its connection is gone). */
export function written(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (res.writableFinished || res.destroyed) return resolve();
    res.once('finish', resolve);
    res.once('close', resolve);
  });
}

/**
 * One request of a connection answered at a time, for a listener that only operators and tools call
 * (admin, metrics): node's server emits a request for every pipelined message it has read at once, so a
 * client that wrote thousands in one packet and never read had every one answered and the answers held
 * in the process. No operator's tool, scraper or probe pipelines more than a few.
 */
export class PipelinedTurns {
  readonly #turns = new WeakMap<Socket, Turns>();

  /**
   * Resolves when `res`, a request of `socket`, may be answered: once the answer before it on that
   * connection is written out. Undefined when the connection had MAX_PIPELINED unanswered: it is closed.
   */
  take(socket: Socket, res: ServerResponse): Promise<void> | undefined {
    let t = this.#turns.get(socket);
    if (!t) this.#turns.set(socket, (t = { waiting: 0, last: Promise.resolve() }));
    if (t.waiting >= MAX_PIPELINED) {
      socket.destroy();
      return undefined;
    }
    const mine = t;
    const turn = mine.last;
    mine.waiting++;
    mine.last = turn.then(() => written(res)).finally(() => void mine.waiting--);
    return turn;
  }
}
