import { spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { currentHost } from './launch-plan.js';

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

  /** `owner`: the instance's user where it is not the gateway's (a root gateway's). */
  constructor(owner: { uid: number; gid: number } | undefined) {
    // Beside the host's /tmp, where the server ran before: every user can reach it.
    this.path = mkdtempSync(join('/tmp', 'switchboard-home-'));
    this.#owner = owner;
    try {
      if (owner) chownSync(this.path, owner.uid, owner.gid);
    } catch (err) {
      rmSync(this.path, { recursive: true, force: true });
      throw err;
    }
  }

  /**
   * Once the instance is gone. Removed by its own user, never by root: a process of that user still
   * running (a configured `sandbox.user` is shared) could swap a folder in it for a link while root
   * walks the tree, and have root delete what the link leads to. A gateway's own user has nothing to gain.
   */
  remove(): void {
    if (!this.#owner) {
      try {
        rmSync(this.path, { recursive: true, force: true });
      } catch {
        // a folder the server made unwritable: what is left stays, as with any file it wrote in /tmp before
      }
      return;
    }
    const rm = currentHost().systemTool('rm');
    if (!rm) return;
    spawn(rm, ['-rf', '--', this.path], { uid: this.#owner.uid, gid: this.#owner.gid, stdio: 'ignore', env: {} })
      .once('error', () => {})
      .unref();
  }
}
