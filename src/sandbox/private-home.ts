import { randomBytes } from 'node:crypto';
import { chownSync, lstatSync, mkdirSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawnHelper } from './inherited-descriptors.js';
import { currentHost } from './launch-plan.js';

/** Where every home is made, and how its name begins (leftovers are found by it). */
const PARENT = '/tmp';
const PREFIX = 'switchboard-home-';

/**
 * A folder of one `limits` instance's own on the host (0700, owned by its user): its HOME, TMPDIR and,
 * without a configured `cwd`, its working directory. That profile has no filesystem of its own, and the
 * host's /tmp in their place was common to every instance: one could leave there what another's launcher
 * reads from its home or its working directory (an .npmrc, a node_modules, a Python module that shadows
 * the standard library), to be run by that instance, with its user's token. Bubblewrap gives each a private
 * /tmp already.
 */
export class PrivateHome {
  readonly path: string;
  readonly #owner: { uid: number; gid: number } | undefined;
  #made = false;

  /**
   * `owner`: the instance's user where it is not the gateway's (a root gateway's). Only names the folder:
   * an instance may never start (its user's token refused), and a folder made for it then cost a removal,
   * as root a fork, for each refused call. make() makes it once the server is really to be spawned.
   */
  constructor(owner: { uid: number; gid: number } | undefined) {
    // Beside the host's /tmp, where the server ran before: every user can reach it. The name is random and
    // made exclusively (mkdir fails on anything already there, a link included), as mkdtemp's would be.
    this.path = join(PARENT, `${PREFIX}${randomBytes(9).toString('hex')}`);
    this.#owner = owner;
  }

  /** Just before the spawn: the folder, 0700, its user's. Throws when it cannot be made (the start fails). */
  make(): void {
    mkdirSync(this.path, { mode: 0o700 });
    this.#made = true;
    try {
      if (this.#owner) chownSync(this.path, this.#owner.uid, this.#owner.gid);
    } catch (err) {
      rmSync(this.path, { recursive: true, force: true });
      this.#made = false;
      throw err;
    }
  }

  /**
   * Once the instance is gone. Removed by its own user, never by root: a process of that user still
   * running (a configured `sandbox.user` is shared) could swap a folder in it for a link while root
   * walks the tree, and have root delete what the link leads to. A gateway's own user has nothing to gain.
   * An empty one (a server that wrote nothing) goes without a fork: rmdir never follows a link and
   * removes only an empty folder, so root risks nothing with it.
   */
  remove(): void {
    if (!this.#made) return;
    this.#made = false;
    if (!this.#owner) {
      try {
        rmSync(this.path, { recursive: true, force: true });
      } catch {
        // a folder the server made unwritable: what is left stays, as with any file it wrote in /tmp before
      }
      return;
    }
    try {
      rmdirSync(this.path);
    } catch {
      // not empty (or no longer a folder): its user removes it
      PrivateHome.removeAs(this.path, this.#owner);
    }
  }

  /**
   * Every home in the host's /tmp, by the user that owns it: its direct children named like one that are
   * folders (lstat: a link is not followed, nor counted). What a pool must not hand out while it is there.
   */
  static owners(): Map<number, string[]> {
    const owners = new Map<number, string[]>();
    let names: string[];
    try {
      names = readdirSync(PARENT).filter((n) => n.startsWith(PREFIX));
    } catch {
      return owners;
    }
    for (const name of names) {
      const path = join(PARENT, name);
      try {
        const st = lstatSync(path);
        if (st.isDirectory()) owners.set(st.uid, [...(owners.get(st.uid) ?? []), path]);
      } catch {
        // gone meanwhile
      }
    }
    return owners;
  }

  /**
   * Removes a home as its user, never as root (see remove), in the background. Its folders are made
   * writable by that user first: a tool's read-only cache (Go's module cache) would stop rm -rf, and the
   * home would stay, readable by the next instance given the same user. chmod -R follows no link, and as
   * that user it can change nothing the user could not.
   */
  static removeAs(path: string, owner: { uid: number; gid: number }): void {
    const [chmod, rm] = [currentHost().systemTool('chmod'), currentHost().systemTool('rm')];
    if (!rm) return;
    const as = { uid: owner.uid, gid: owner.gid, stdio: ['ignore', 'ignore', 'ignore'] as ['ignore', 'ignore', 'ignore'], env: {} };
    let removing = false;
    const remove = () => {
      if (removing) return;
      removing = true;
      spawnHelper(rm, ['-rf', '--', path], as).once('error', () => {}).unref();
    };
    if (!chmod) return remove();
    spawnHelper(chmod, ['-R', 'u+rwx', '--', path], as).once('error', remove).once('close', remove).unref();
  }
}
