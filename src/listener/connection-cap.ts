import type { Server } from 'node:http';

export interface ConnectionCapOptions {
  /** Open connections at most. */
  max: number;
  /** Told at most once per warnEveryMs, with the connections refused since the last time (a flood must not flood the log). */
  warn: (dropped: number) => void;
  warnEveryMs?: number;
}

/**
 * A cap on the open connections of a listener that only operators and tools call (admin, metrics): node
 * took any number by default, so anyone reaching the port could hold connections without a token until
 * the process ran out of descriptors, which the MCP listener shares. Node refuses the excess at accept,
 * before a socket is made.
 */
export class ConnectionCap {
  readonly #o: ConnectionCapOptions;
  #dropped = 0;
  #warnedAt = Number.NEGATIVE_INFINITY;
  readonly #drop = (): void => {
    this.#dropped++;
    if (Date.now() - this.#warnedAt < (this.#o.warnEveryMs ?? 60_000)) return;
    this.#warnedAt = Date.now();
    this.#o.warn(this.#dropped);
    this.#dropped = 0;
  };

  constructor(o: ConnectionCapOptions) {
    this.#o = o;
  }

  attach(server: Server): void {
    server.maxConnections = this.#o.max;
    server.on('drop', this.#drop);
  }
}
