import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type { Logger } from '../observability/logger.js';
import { readPinFile, withPinFileLock, writePinFile } from './pin-file.js';
import { approvalsBetween, approveIn, observeIn, type ApprovedPin, type Observation, type PinStore, type PinTable } from './pin-store.js';

/** How often the gateway looks at the pins file for the CLI's approvals. */
const WATCH_INTERVAL_MS = 250;

interface Sighting {
  upstream: string;
  tool: string;
  hash: string;
  summary: string;
  fixed: string | undefined;
  at: string;
}

/**
 * Pins in memory (one replica), optionally persisted to a JSON file. Sightings answer from memory at
 * once and reach the file shortly after, in batches; the file is re-read whenever it changes, which is
 * how `switchboard pins approve` reaches a running gateway. Each write re-reads the file under a lock
 * and replays this process's sightings on it, so the CLI's approvals are never overwritten.
 */
export class MemoryPinStore implements PinStore {
  readonly #file: string | undefined;
  readonly #logger: Logger | undefined;
  #table: PinTable = {};
  /** Sightings applied in memory, not yet in the file. */
  readonly #unsaved: Sighting[] = [];
  #flushing: Promise<void> | undefined;
  #again = false;
  #watching = false;
  /** Counts adoptions, so that a slow re-read never replaces a table adopted after it began. */
  #epoch = 0;
  onApproved: ((pins: ApprovedPin[], report: boolean) => void) | undefined;

  constructor(file?: string, logger?: Logger) {
    this.#file = file;
    this.#logger = logger;
  }

  async start(): Promise<void> {
    if (!this.#file) return;
    try {
      this.#table = await readPinFile(this.#file);
    } catch (err) {
      // Better to start and re-pin than to refuse to start; the file is left as it is until the next write.
      this.#logger?.error({ err: (err as Error).message, file: this.#file }, 'could not read the pins file; starting without its pins');
    }
    watchFile(this.#file, { interval: WATCH_INTERVAL_MS, persistent: false }, this.#onFileChange);
    this.#watching = true;
  }

  readonly #onFileChange = (cur: Stats, prev: Stats): void => {
    if (cur.mtimeMs === prev.mtimeMs && cur.ino === prev.ino && cur.size === prev.size) return;
    void this.#reload();
  };

  async #reload(): Promise<void> {
    const epoch = this.#epoch;
    try {
      const table = await readPinFile(this.#file!);
      // A write of ours adopted a fresher read meanwhile; a later change of the file polls again.
      if (epoch === this.#epoch) this.#adopt(table);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.#logger?.warn({ err: (err as Error).message, file: this.#file }, 'could not re-read the pins file; keeping the pins in memory');
    }
  }

  /** Takes a table read from the file as the truth, with this process's unsaved sightings on top. */
  #adopt(next: PinTable): void {
    this.#epoch++;
    for (const s of this.#unsaved) observeIn(next, s.upstream, s.tool, s.hash, s.summary, s.fixed, s.at);
    const { approved, other } = approvalsBetween(this.#table, next);
    this.#table = next;
    if (approved.length > 0) this.onApproved?.(approved, true);
    if (other.length > 0) this.onApproved?.(other, false);
  }

  async observe(upstream: string, tool: string, hash: string, summary: string, fixed: string | undefined): Promise<Observation> {
    const at = new Date().toISOString();
    const before = JSON.stringify(this.#table[upstream]?.[tool] ?? null);
    const obs = observeIn(this.#table, upstream, tool, hash, summary, fixed, at);
    if (this.#file && JSON.stringify(this.#table[upstream]?.[tool] ?? null) !== before) {
      this.#unsaved.push({ upstream, tool, hash, summary, fixed, at });
      this.#scheduleFlush();
    }
    return obs;
  }

  #scheduleFlush(): void {
    if (this.#flushing) {
      this.#again = true;
      return;
    }
    // A tick's worth of sightings (a whole tools/list) goes out in one write.
    this.#flushing = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#flush());
  }

  async #flush(): Promise<void> {
    const file = this.#file!;
    try {
      await withPinFileLock(file, async () => {
        const batch = this.#unsaved.length;
        const table = await readPinFile(file);
        for (const s of this.#unsaved.slice(0, batch)) observeIn(table, s.upstream, s.tool, s.hash, s.summary, s.fixed, s.at);
        await writePinFile(file, table);
        this.#unsaved.splice(0, batch);
        this.#adopt(table);
      });
    } catch (err) {
      this.#logger?.error({ err: (err as Error).message, file }, 'could not write the pins file; pins are kept in memory and written with the next change');
    } finally {
      this.#flushing = undefined;
      if (this.#again) {
        this.#again = false;
        this.#scheduleFlush();
      }
    }
  }

  async approve(upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): Promise<ApprovedPin[]> {
    if (!this.#file) {
      const done = approveIn(this.#table, upstream, items);
      if (done.length > 0) this.onApproved?.(done, true);
      return done;
    }
    return withPinFileLock(this.#file, async () => {
      const table = await readPinFile(this.#file!);
      const done = approveIn(table, upstream, items);
      if (done.length > 0) await writePinFile(this.#file!, table);
      this.#adopt(table);
      return done;
    });
  }

  async table(upstreams: readonly string[]): Promise<PinTable> {
    // The CLI reads the file as it is now; a running gateway's memory is ahead of its file by one flush at most.
    const source = this.#file && !this.#watching ? await readPinFile(this.#file) : this.#table;
    const out: PinTable = {};
    for (const u of upstreams) if (source[u]) out[u] = structuredClone(source[u]);
    return out;
  }

  /** Waits for sightings still on their way to the file (tests, shutdown). */
  async flushed(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  async close(): Promise<void> {
    if (this.#watching) unwatchFile(this.#file!, this.#onFileChange);
    this.#watching = false;
    await this.flushed();
  }
}
