import { randomInt } from 'node:crypto';
import { runningUids } from './uid-reaper.js';

/**
 * User ids for sandboxed servers of a gateway running as root: one per running instance, so that no two
 * servers share a user. Two processes of one user can signal and ptrace each other, read each other's
 * /proc entries, and (through the user namespace bubblewrap creates for them) enter each other's
 * sandbox; distinct ids rule that out between upstreams, between tenants and between sessions.
 * The range is far above the ids distributions hand out to people and services (and above the usual
 * subordinate ranges of rootless containers), so no host account shares one.
 */
export const UID_BASE = 1_900_000_000;
export const UID_COUNT = 65_536;
/** The group every pooled id runs with (nogroup): what writable paths are shared through. */
export const SANDBOX_GID = 65534;

export class UidPool {
  readonly #inUse = new Set<number>();
  #next: number;
  readonly #running: () => ReadonlySet<number>;

  /**
   * `first`: where in the range this pool starts, at random, so that two gateways on one host seldom try
   * the same ids (they do not know each other's; see acquire). `running`: the user ids processes run as.
   */
  constructor(first: number = randomInt(UID_COUNT), running: () => ReadonlySet<number> = runningUids) {
    this.#next = first;
    this.#running = running;
  }

  /**
   * An id no instance of this gateway has, and that no process runs as: a server a crashed gateway left
   * behind (started by a version whose limits profile did not die with it), or another gateway's on the same host.
   * The processes are read once (a walk of /proc, on the event loop), however many ids are passed over.
   */
  acquire(): number {
    if (this.#inUse.size >= UID_COUNT) throw new Error(`all ${UID_COUNT} sandbox user ids are in use`);
    const running = this.#running();
    for (let tried = 0; tried < UID_COUNT; tried++) {
      const uid = UID_BASE + (this.#next++ % UID_COUNT);
      if (this.#inUse.has(uid) || running.has(uid)) continue;
      this.#inUse.add(uid);
      return uid;
    }
    throw new Error(`all ${UID_COUNT} sandbox user ids are in use or run a process`);
  }

  release(uid: number): void {
    this.#inUse.delete(uid);
  }

  get size(): number {
    return this.#inUse.size;
  }
}
