import type { ServerResponse } from 'node:http';

/**
 * Requests this replica relays to the replicas owning their sessions, counted until each one's answer
 * has ended here: a graceful stop waits for them as for its own sessions' requests (a relayed call is
 * in flight on this replica too, and closing the listener cut the client's answer mid-stream).
 * GET streams are not counted, as local ones are not: they are open for as long as the client wants.
 */
export class Relays {
  #count = 0;

  get inflight(): number {
    return this.#count;
  }

  /** Runs `forward` with an `open` that counts the relay until the response it opened closes. */
  async track<T>(method: string, open: () => ServerResponse, forward: (open: () => ServerResponse) => Promise<T>): Promise<T> {
    if (method === 'GET') return forward(open);
    this.#count++;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.#count--;
    };
    let opened = false;
    const counted = () => {
      const res = open();
      opened = true;
      // A response already gone will emit no further 'close'.
      if (res.destroyed || res.writableFinished || !res.socket || res.socket.destroyed) end();
      else res.once('close', end);
      return res;
    };
    try {
      return await forward(counted);
    } finally {
      // No response opened: nothing was relayed (the session is taken over here, or the forward failed).
      if (!opened) end();
    }
  }
}
