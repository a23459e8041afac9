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
  #next = 0;

  acquire(): number {
    if (this.#inUse.size >= UID_COUNT) throw new Error(`all ${UID_COUNT} sandbox user ids are in use`);
    for (;;) {
      const uid = UID_BASE + (this.#next++ % UID_COUNT);
      if (!this.#inUse.has(uid)) {
        this.#inUse.add(uid);
        return uid;
      }
    }
  }

  release(uid: number): void {
    this.#inUse.delete(uid);
  }

  get size(): number {
    return this.#inUse.size;
  }
}
