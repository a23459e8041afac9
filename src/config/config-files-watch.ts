import { watchConfigFile, type ConfigWatchOptions } from './config-watch.js';

export interface ConfigFilesWatchOptions {
  /** The digest of the config file's content in force (sourceDigest). */
  loaded?: string | undefined;
  log?: ConfigWatchOptions['log'];
  /** Whether every file is watched now (switchboard_config_watch_up): false while any watch is down. */
  onState?: (watching: boolean) => void;
}

/**
 * admin.watchConfig: the config file, and the files it names that only a reload reads again, the key
 * files of auth.keys (re-read on every reload). A Secret or a PEM rotated in place changed no byte of the
 * config, so the watch never reloaded and the new key's tokens were refused until a SIGHUP. The other
 * files a config names need no reload: admin.tokenFile and clientSecretFile are read where they are used,
 * pinning.file is watched by its store. Each file is watched as config-watch.ts watches one (its
 * directory, a ConfigMap's or Secret's ..data swap, a link's target); `onChange` is told which kind moved.
 */
export class ConfigFilesWatch {
  readonly #configFile: string;
  readonly #onChange: (trigger: string) => void;
  readonly #o: ConfigFilesWatchOptions;
  readonly #stops = new Map<string, () => void>();
  /** Files whose watch is down now. */
  readonly #down = new Set<string>();
  #stopped = false;

  constructor(configFile: string, onChange: (trigger: string) => void, o: ConfigFilesWatchOptions = {}) {
    this.#configFile = configFile;
    this.#onChange = onChange;
    this.#o = o;
    this.#stops.set(configFile, this.#watch(configFile, 'file watch', o.loaded));
  }

  /** Watches exactly these key files from now on (those the config in force names), besides the config file. */
  follow(keyFiles: readonly string[]): void {
    if (this.#stopped) return;
    const wanted = new Set(keyFiles.filter((f) => f !== this.#configFile));
    for (const [file, stop] of this.#stops) {
      if (file === this.#configFile || wanted.has(file)) continue;
      stop();
      this.#stops.delete(file);
      this.#state(file, true);
    }
    // Started now, a new file's watch takes its content now as loaded: the reload that named it just read it.
    for (const file of wanted) if (!this.#stops.has(file)) this.#stops.set(file, this.#watch(file, 'key file watch'));
  }

  stop(): void {
    this.#stopped = true;
    for (const stop of this.#stops.values()) stop();
    this.#stops.clear();
  }

  #watch(file: string, trigger: string, loaded?: string): () => void {
    return watchConfigFile(file, () => this.#onChange(trigger), { loaded, log: this.#o.log, onState: (up) => this.#state(file, up) });
  }

  #state(file: string, up: boolean): void {
    if (up) this.#down.delete(file);
    else this.#down.add(file);
    this.#o.onState?.(this.#down.size === 0);
  }
}
