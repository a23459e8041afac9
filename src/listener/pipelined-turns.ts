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

/**
 * Requests pipelined on a connection of the MCP listener, waiting for their turn. Node emits each request
 * as soon as it is parsed, but answers go in order, so one behind an event stream (a GET stream lasts as
 * long as its session) had its call served upstream while its answer waited behind the stream, unseen, and
 * a client that pipelined the answer to a question a POST stream waited on deadlocked the two. A request is
 * served once its answer is the connection's current one; more than MAX_PIPELINED waiting close the connection.
 */
export class QueuedTurns {
  readonly #waiting = new WeakMap<Socket, number>();

  /**
   * For a request whose answer `res` has no socket yet (queued behind another): resolves true once it has
   * one, false when the connection closed first; undefined when too many wait on `socket` (it is closed).
   */
  wait(socket: Socket, res: ServerResponse): Promise<boolean> | undefined {
    const n = this.#waiting.get(socket) ?? 0;
    if (n >= MAX_PIPELINED) {
      socket.destroy();
      return undefined;
    }
    this.#waiting.set(socket, n + 1);
    return new Promise<boolean>((resolve) => {
      const settle = (turn: boolean) => {
        res.off('socket', mine);
        socket.off('close', gone);
        this.#waiting.set(socket, (this.#waiting.get(socket) ?? 1) - 1);
        resolve(turn);
      };
      const mine = () => settle(true);
      const gone = () => settle(false);
      res.once('socket', mine);
      socket.once('close', gone);
    });
  }
}
