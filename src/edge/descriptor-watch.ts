import { readdirSync } from 'node:fs';

export interface DescriptorWatchOptions {
  /** The process's soft RLIMIT_NOFILE (descriptorLimit()); undefined: nothing is watched. */
  limit: number | undefined;
  /** Open descriptors now (Infinity: none left to count them with), or undefined where they cannot be counted (default: /proc/self/fd on Linux). */
  count?: () => number | undefined;
  now?: () => number;
}

/** A count is reused this long: /readyz may be asked often, and a count reads a directory of up to `limit` entries. */
const COUNT_TTL_MS = 1000;

/** Descriptors kept free before readiness goes false: a sixteenth of the limit, 8 to 64. */
export function descriptorReserve(limit: number): number {
  return Math.min(64, Math.max(8, Math.floor(limit / 16)));
}

/**
 * Reading the directory takes a descriptor itself: with none left it fails (EMFILE, or ENFILE with the
 * system's table full), which means every one is in use (Infinity), not that they cannot be counted.
 */
function openDescriptors(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EMFILE' || code === 'ENFILE' ? Number.POSITIVE_INFINITY : undefined;
  }
}

/**
 * Whether the process is running out of file descriptors, for /readyz. An accept that fails for want of
 * descriptors is never reported to Node (libuv ≥ 1.45, in Node 20 and later: it closes the connection
 * on a spare descriptor, or leaves it waiting in the backlog, and emits no 'error'), so the server's own
 * events cannot tell; the descriptors are counted instead. The connection caps keep client connections
 * below the limit by default, but upstream pipes, Redis, files and a configured server.maxConnections
 * above the limit use the same descriptors.
 */
export class DescriptorWatch {
  readonly #limit: number | undefined;
  readonly #count: () => number | undefined;
  readonly #now: () => number;
  #countedAt = Number.NEGATIVE_INFINITY;
  #open: number | undefined;

  constructor(o: DescriptorWatchOptions) {
    this.#limit = o.limit;
    this.#count = o.count ?? openDescriptors;
    this.#now = o.now ?? Date.now;
  }

  /** Why new clients should not come here now, or undefined (also where nothing can be counted). */
  exhausted(): string | undefined {
    const limit = this.#limit;
    if (limit === undefined) return undefined;
    const now = this.#now();
    if (now - this.#countedAt >= COUNT_TTL_MS) {
      this.#open = this.#count();
      this.#countedAt = now;
    }
    const open = this.#open;
    if (open === undefined || open < limit - descriptorReserve(limit)) return undefined;
    return `${Math.min(open, limit)} of at most ${limit} file descriptors open`;
  }
}
