import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionCapOptions {
  /** Open connections at most, over every server attached. */
  max: number;
  /** Told at most once per warnEveryMs, with the connections refused since the last time (a flood must not flood the log). */
  warn: (dropped: number) => void;
  warnEveryMs?: number;
}

/**
 * A cap on the open connections of a listener that only operators and tools call (admin, metrics): node
 * took any number by default, so anyone reaching the port could hold connections without a token until
 * the process ran out of descriptors, which the MCP listener shares. One cap over every server the
 * listener opens: Fastify opens one per address of `localhost` (127.0.0.1, and ::1 on a server of its
 * own), and node's cap (server.maxConnections) counts each server alone, so a listener capped on its
 * first server took any number on the second. Node's cap still refuses at accept (no socket made) what
 * one server alone would take past the cap; the count here closes what the servers take together past it.
 */
export class ConnectionCap {
  readonly #o: ConnectionCapOptions;
  readonly #servers = new WeakSet<Server>();
  #open = 0;
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

  /** Open connections now, over every server attached. */
  get open(): number {
    return this.#open;
  }

  /** Counts `server`'s connections in the cap (once, however often it is attached). */
  attach(server: Server): void {
    if (this.#servers.has(server)) return;
    this.#servers.add(server);
    server.maxConnections = this.#o.max;
    server.on('drop', this.#drop);
    server.on('connection', (socket: Socket) => {
      if (this.#open >= this.#o.max) {
        socket.destroy();
        this.#drop();
        return;
      }
      this.#open++;
      socket.once('close', () => this.#open--);
    });
  }
}
