import { existsSync, watch, readFileSync, realpathSync, statSync, type FSWatcher } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { contentDigest } from './source-digest.js';

/** How long the file must be quiet before a change counts: editors and ConfigMap updates write in steps. */
const SETTLE_MS = 300;
/** Between attempts to watch again a directory that went away: doubling from `first` up to `max`. */
const RETRY_MS = { first: 1000, max: 30_000 };

function digest(file: string): string | undefined {
  try {
    return contentDigest(readFileSync(file));
  } catch {
    return undefined; // gone for a moment (an editor's rename, a ConfigMap's symlink swap)
  }
}

/** The directory's identity: a directory removed and made again (or remounted) is another one, which the old watch never sees. */
function identity(dir: string): string | undefined {
  try {
    const s = statSync(dir);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

/** A directory's path with its links resolved, or as given when it cannot be. */
function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

/**
 * Where a change of the file `file` links to (`real`) shows, when not in the path's own directory `dir`:
 * the target's directory and its name there; for a ConfigMap's file (in a timestamped ..2026_… directory,
 * which an update replaces), the mount holding that directory and its ..data link. Undefined: no link,
 * or one the own directory's watch sees (a ConfigMap mounted there).
 */
function targetWatch(real: string, file: string, dir: string): { dir: string; name: string; key: string } | undefined {
  if (real === resolve(file)) return undefined;
  const parent = dirname(real);
  const configMap = basename(parent).startsWith('..');
  const at = configMap ? { dir: dirname(parent), name: '..data' } : { dir: parent, name: basename(real) };
  if (configMap && at.dir === realDir(dir)) return undefined;
  return { ...at, key: `${at.dir}\n${at.name}` };
}

export interface ConfigWatchOptions {
  /** The digest of the content in force (sourceDigest); default: the file's content when the watch starts. */
  loaded?: string;
  /** Told when the watch stops (with why) and when it is back. */
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** Whether the file is watched now (switchboard_config_watch_up). */
  onState?: (watching: boolean) => void;
  retryMs?: { first: number; max: number };
}

/**
 * Calls `onChange` when the config file's content changes. The directory is watched, not the file: a
 * Kubernetes ConfigMap update replaces a symlink (..data) and editors replace the file, either of which
 * ends a watch on the file itself. Only a change of content counts. Returns the function that stops it.
 *
 * `loaded`: the watch starts once the gateway has started its upstreams, seconds after the file was
 * read; an edit made meanwhile raised no event the watch saw and was its starting point, so it was never
 * loaded. The file is compared with `loaded` once the watch is up, and again each time it is back.
 *
 * The directory going away (a remount, an rm -r) or the watcher failing ended the watch silently: later
 * edits were never applied. It is now logged, reported (onState), and the directory is watched again
 * once it is there (retried with a doubling delay, at most retryMs.max), the file then compared as at start.
 */
export function watchConfigFile(file: string, onChange: () => void, o: ConfigWatchOptions = {}): () => void {
  const w = new ConfigWatch(file, onChange, o);
  w.start();
  return () => w.stop();
}

class ConfigWatch {
  readonly #file: string;
  readonly #dir: string;
  readonly #name: string;
  readonly #onChange: () => void;
  readonly #o: ConfigWatchOptions;
  readonly #retry: { first: number; max: number };
  #last: string | undefined;
  #watcher: FSWatcher | undefined;
  /** The identity of the directory the watcher watches. */
  #watched: string | undefined;
  #settle: NodeJS.Timeout | undefined;
  #again: NodeJS.Timeout | undefined;
  #delay: number;
  /** The directory watched for the file the path links to, when that is elsewhere (followTarget), and its watcher. */
  #target: { key: string; watcher: FSWatcher } | undefined;
  /** Why the watch is down (undefined while it is up, or before its first start). */
  #down: string | undefined;
  #stopped = false;

  constructor(file: string, onChange: () => void, o: ConfigWatchOptions) {
    this.#file = file;
    this.#dir = dirname(file);
    this.#name = basename(file);
    this.#onChange = onChange;
    this.#o = o;
    this.#retry = o.retryMs ?? RETRY_MS;
    this.#delay = this.#retry.first;
    this.#last = o.loaded ?? digest(file);
  }

  start(): void {
    if (this.#stopped) return;
    const id = identity(this.#dir);
    let watcher: FSWatcher;
    try {
      if (id === undefined) throw new Error(`${this.#dir} does not exist`);
      watcher = watch(this.#dir, (_event, changed) => this.#event(watcher, changed));
    } catch (err) {
      return this.#lost(undefined, `cannot watch the directory: ${(err as Error).message}`);
    }
    watcher.on('error', (err) => this.#lost(watcher, `the watcher failed: ${err.message}`));
    this.#watcher = watcher;
    this.#watched = id;
    this.#delay = this.#retry.first;
    if (this.#down !== undefined) this.#o.log?.info({ config: this.#file }, 'watching the config file again');
    this.#down = undefined;
    this.#o.onState?.(true);
    this.#followTarget();
    this.#settle = setTimeout(() => this.#check(), SETTLE_MS);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#settle);
    clearTimeout(this.#again);
    this.#watcher?.close();
    this.#target?.watcher.close();
  }

  /**
   * A path that is a symlink to a file elsewhere (/etc/switchboard/gateway.yaml into a checkout of a config
   * repository): an edit of that file, or a new one renamed over it, happens in the target's directory and
   * raised no event in the path's, so it was never loaded. That directory is watched too, as it is now
   * (a link pointed elsewhere is followed at the next check). A ConfigMap's file resolves into a timestamped
   * directory (..2026_…) that an update replaces: the mount holding it is watched for its ..data swap, unless
   * it is the path's own directory, whose watch sees the swap. A link into a mount elsewhere was taken for
   * that case, and no update of the mount was ever loaded.
   */
  #followTarget(): void {
    let real: string;
    try {
      real = realpathSync(this.#file);
    } catch {
      return; // gone for a moment: the next check follows it
    }
    const where = targetWatch(real, this.#file, this.#dir);
    if (this.#target?.key === where?.key) return;
    this.#target?.watcher.close();
    this.#target = undefined;
    if (where === undefined || this.#stopped) return;
    try {
      const watcher = watch(where.dir, (_event, changed) => {
        if (this.#target?.watcher !== watcher || (changed !== null && changed !== where.name)) return;
        clearTimeout(this.#settle);
        this.#settle = setTimeout(() => this.#check(), SETTLE_MS);
      });
      watcher.on('error', () => {
        // Its directory gone: the path's own watch goes on; the next check follows the link again.
        if (this.#target?.watcher !== watcher) return;
        watcher.close();
        this.#target = undefined;
      });
      this.#target = { key: where.key, watcher };
    } catch {
      // Not watchable: the path's own directory still is.
    }
  }

  #event(from: FSWatcher, changed: string | null): void {
    if (from !== this.#watcher) return; // one closed already (its last events)
    // A directory removed (or replaced, remounted) says so once, with an event naming itself, and never
    // again. Its identity tells, unless a new one was made at once and given the same inode number.
    const self = changed === basename(this.#dir) && !existsSync(join(this.#dir, changed));
    if (self || identity(this.#dir) !== this.#watched) return this.#lost(from, 'the directory is gone or was replaced');
    if (changed !== null && changed !== this.#name && changed !== '..data') return;
    clearTimeout(this.#settle);
    this.#settle = setTimeout(() => this.#check(), SETTLE_MS);
  }

  #check(): void {
    this.#followTarget();
    const now = digest(this.#file);
    if (now === undefined || now === this.#last) return;
    this.#last = now;
    this.#onChange();
  }

  /** The watch is down: said once per outage, then tried again with a growing delay. `from`: the watcher that failed (none: a start). */
  #lost(from: FSWatcher | undefined, why: string): void {
    // Only the watcher in force (an error after an event that ended it would start two).
    if (this.#stopped || from !== this.#watcher) return;
    this.#watcher?.close();
    this.#watcher = undefined;
    clearTimeout(this.#settle);
    if (this.#down === undefined) {
      this.#o.log?.warn({ config: this.#file, reason: why }, 'the config file watch stopped: edits are not applied until it is back; watching again as soon as the directory is there');
      this.#o.onState?.(false);
    }
    this.#down = why;
    this.#again = setTimeout(() => this.start(), this.#delay);
    this.#delay = Math.min(this.#delay * 2, this.#retry.max);
  }
}
