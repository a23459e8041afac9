import { randomInt } from 'node:crypto';
import { PrivateHome } from './private-home.js';
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

/** What the pool reads of the host (injected by tests): the ids processes run as, the homes by owner. */
export interface HostUsers {
  running?: () => Promise<ReadonlySet<number>>;
  homes?: () => ReadonlyMap<number, readonly string[]>;
}

export class UidPool {
  readonly #inUse = new Set<number>();
  #next: number;
  readonly #running: () => Promise<ReadonlySet<number>>;
  readonly #homes: () => ReadonlyMap<number, readonly string[]>;
  #swept = false;

  /**
   * `first`: where in the range this pool starts, at random, so that two gateways on one host seldom try
   * the same ids (they do not know each other's; see acquire).
   */
  constructor(first: number = randomInt(UID_COUNT), host: HostUsers = {}) {
    this.#next = first;
    this.#running = host.running ?? runningUids;
    this.#homes = host.homes ?? (() => PrivateHome.owners());
  }

  /**
   * An id no instance of this gateway has, that no process runs as (a server a crashed gateway left
   * behind, started by a version whose limits profile did not die with it, or another gateway's on the
   * same host), and that owns no home in /tmp: one a crashed gateway's instance left (its server died
   * with the gateway, its home did not), or one its user could not remove. Whoever got that id next could
   * read what the last server kept there (its credentials, its token caches). The processes and homes are
   * read once (a walk of /proc, off the event loop), however many ids are passed over. From the end of
   * that walk to the id's being marked taken there is no await: two acquires never get the same id.
   */
  async acquire(): Promise<number> {
    if (this.#inUse.size >= UID_COUNT) throw new Error(`all ${UID_COUNT} sandbox user ids are in use`);
    // Homes before processes: a home another gateway makes is made right before its spawn, so its process
    // is there by the walk of /proc, and the home is not taken for a leftover.
    const homes = this.#homes();
    const running = await this.#running();
    if (!this.#swept) this.#sweep(homes, running);
    for (let tried = 0; tried < UID_COUNT; tried++) {
      const uid = UID_BASE + (this.#next++ % UID_COUNT);
      if (this.#inUse.has(uid) || running.has(uid) || homes.has(uid)) continue;
      this.#inUse.add(uid);
      return uid;
    }
    throw new Error(`all ${UID_COUNT} sandbox user ids are in use, run a process or own a leftover home`);
  }

  /**
   * Once, at the first acquire (a gateway restarted after a crash): the leftover homes of pooled ids no
   * process runs as are removed by their users, in the background. Their ids stay passed over until
   * they are gone.
   */
  #sweep(homes: ReadonlyMap<number, readonly string[]>, running: ReadonlySet<number>): void {
    this.#swept = true;
    for (const [uid, paths] of homes) {
      if (uid < UID_BASE || uid >= UID_BASE + UID_COUNT || running.has(uid) || this.#inUse.has(uid)) continue;
      for (const path of paths) PrivateHome.removeAs(path, { uid, gid: SANDBOX_GID });
    }
  }

  release(uid: number): void {
    this.#inUse.delete(uid);
  }

  get size(): number {
    return this.#inUse.size;
  }
}
