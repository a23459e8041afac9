import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

export type ConnectionRefusal = 'max_connections' | 'unauthenticated' | 'body_idle' | 'emfile';

export interface ConnectionLimitOptions {
  maxConnections: number;
  /** Connections that have not carried an authenticated request, at most; the oldest idle one goes first. */
  maxUnauthenticated: number;
  bodyIdleTimeoutMs: number;
  onRefused?: (reason: ConnectionRefusal) => void;
  now?: () => number;
}

/** Readiness stays false this long after the process ran out of descriptors. */
const EMFILE_UNREADY_MS = 10_000;
/** Readiness goes false when this share of maxConnections is open. */
const NEAR_CAP = 0.9;

/** The soft RLIMIT_NOFILE of this process (Linux), or undefined when it cannot be read or is unlimited. */
export function descriptorLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    const n = Number(line?.[1]);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The caps in force: configured, or derived from the descriptor limit so that connections alone can
 * never exhaust it (upstream pipes, Redis, files and the event loop keep a reserve of a quarter, at most 256).
 */
export function connectionCaps(cfg: { maxConnections?: number | undefined; maxUnauthenticatedConnections?: number | undefined }, fdLimit = descriptorLimit()): { maxConnections: number; maxUnauthenticated: number } {
  const derived = fdLimit === undefined ? 10_000 : Math.min(10_000, Math.max(32, fdLimit - Math.min(256, Math.floor(fdLimit / 4))));
  const maxConnections = cfg.maxConnections ?? derived;
  const maxUnauthenticated = Math.min(cfg.maxUnauthenticatedConnections ?? Math.floor(maxConnections / 2), maxConnections - 1);
  return { maxConnections, maxUnauthenticated: Math.max(1, maxUnauthenticated) };
}

/**
 * What a client may hold at the edge before it has proved who it is. Node's server enforces the total
 * (maxConnections; the excess is closed at accept and reported as 'drop'); this class keeps the
 * connections that never carried an authenticated request under their own, lower cap by closing the
 * oldest idle one (a silent or slow-header client: a legitimate one sends its request at once), and cuts
 * request bodies that stall. The front door tells it when a request arrives and when one authenticated.
 */
export class ConnectionLimits {
  readonly #o: ConnectionLimitOptions;
  /** Sockets of this server (forwarded requests run on fake ones and are left alone). */
  readonly #known = new WeakSet<Socket>();
  /** Never authenticated and not in a request now, oldest first: the ones evicted over the cap. */
  readonly #idle = new Set<Socket>();
  readonly #authenticated = new WeakSet<Socket>();
  /** Requests whose body-idle timer runs. */
  readonly #watched = new WeakSet<IncomingMessage>();
  #open = 0;
  #openAuthenticated = 0;
  #emfileAt = Number.NEGATIVE_INFINITY;

  constructor(o: ConnectionLimitOptions) {
    this.#o = o;
  }

  get maxConnections(): number {
    return this.#o.maxConnections;
  }

  attach(server: Server): void {
    server.maxConnections = this.#o.maxConnections;
    server.on('drop', () => this.#o.onRefused?.('max_connections'));
    server.on('connection', (socket: Socket) => this.#accepted(socket));
    // An accept that failed for want of descriptors is reported here (libuv has already closed the
    // connection); without a listener it would be thrown and end the process.
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EMFILE' || err.code === 'ENFILE') {
        this.#emfileAt = this.#now();
        this.#o.onRefused?.('emfile');
      }
    });
  }

  /** Open connections: authenticated (one of their requests was) and the rest. */
  get counts(): { authenticated: number; unauthenticated: number } {
    return { authenticated: this.#openAuthenticated, unauthenticated: this.#open - this.#openAuthenticated };
  }

  /** Why the gateway should not take new clients now (descriptors running out), or undefined. */
  exhausted(): string | undefined {
    if (this.#open >= Math.floor(this.#o.maxConnections * NEAR_CAP)) return `${this.#open} of at most ${this.#o.maxConnections} connections open`;
    if (this.#now() - this.#emfileAt < EMFILE_UNREADY_MS) return 'out of file descriptors';
    return undefined;
  }

  /** Headers of a request arrived on this socket: it is busy now, not idle. */
  requestArrived(socket: Socket): void {
    this.#idle.delete(socket);
  }

  authenticated(socket: Socket): void {
    if (!this.#known.has(socket) || this.#authenticated.has(socket)) return;
    this.#authenticated.add(socket);
    this.#openAuthenticated++;
  }

  /** Arms the body-idle timer of a request whose body has not fully arrived yet. */
  watchBody(req: IncomingMessage): void {
    if (req.complete || !this.#known.has(req.socket)) return;
    // A body that came with its headers (nearly every MCP message) is already here: no timer to arm.
    const length = req.headers['content-length'];
    if (length !== undefined && req.readableLength >= Number(length)) return;
    this.#watched.add(req);
    // The socket's inactivity timer is reset by every chunk received: exactly a body-idle timeout.
    req.setTimeout(this.#o.bodyIdleTimeoutMs, () => {
      this.#o.onRefused?.('body_idle');
      req.socket.destroy();
    });
  }

  /** The body is read: the response (possibly a long SSE stream) must not inherit the timer. */
  bodyRead(req: IncomingMessage): void {
    if (this.#watched.delete(req)) req.socket.setTimeout(0);
  }

  #accepted(socket: Socket): void {
    this.#known.add(socket);
    this.#open++;
    this.#idle.add(socket);
    socket.once('close', () => {
      this.#open--;
      this.#idle.delete(socket);
      if (this.#authenticated.has(socket)) this.#openAuthenticated--;
    });
    if (this.#idle.size + this.#unauthenticatedBusy() <= this.#o.maxUnauthenticated) return;
    const oldest = this.#idle.values().next().value as Socket;
    this.#idle.delete(oldest);
    this.#o.onRefused?.('unauthenticated');
    oldest.destroy();
  }

  /** Unauthenticated connections that are in a request now (at the front door): bounded by its answer. */
  #unauthenticatedBusy(): number {
    return Math.max(0, this.#open - this.#openAuthenticated - this.#idle.size);
  }

  #now(): number {
    return this.#o.now?.() ?? Date.now();
  }
}
