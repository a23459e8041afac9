import { unwatchFile, watchFile, type Stats } from 'node:fs';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { pinsFileProblem, readPinFile, withPinFileLock, writePinFile } from './pin-file.js';
import { approvalsBetween, approveIn, copyTable, emptyTable, observeIn, rejectIn, rejectionsBetween, type ApprovedPin, type Observation, type PinStore, type PinTable, type RejectedPin, type Sighting } from './pin-store.js';

/** How often the gateway looks at the pins file for the CLI's approvals. */
const WATCH_INTERVAL_MS = 250;

/** One observe() call, replayed whole: a first listing must stay one batch to stay the baseline. */
interface Batch {
  upstream: string;
  sightings: readonly Sighting[];
  pinnedInConfig: boolean;
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
  #table: PinTable = emptyTable();
  /** Sightings applied in memory, not yet in the file. */
  readonly #unsaved: Batch[] = [];
  #flushing: Promise<void> | undefined;
  #again = false;
  #watching = false;
  /** Counts adoptions, so that a slow re-read never replaces a table adopted after it began. */
  #epoch = 0;
  onApproved: ((pins: ApprovedPin[], report: boolean) => void) | undefined;
  onRejected: ((pins: RejectedPin[], report: boolean) => void) | undefined;

  constructor(file?: string, logger?: Logger) {
    this.#file = file;
    this.#logger = logger;
  }

  async start(): Promise<void> {
    if (!this.#file) return;
    try {
      this.#table = await readPinFile(this.#file);
    } catch (err) {
      // Refused, not started without its pins: every tool would then be trusted on first sight (a changed
      // definition approved with no review), and the next write would replace the operator's approvals.
      throw new GatewayError('SWB_CONFIG_INVALID', pinsFileProblem((err as Error).message), { file: this.#file });
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
      // Removed: the pins in memory stand (adopted as they are, nothing changes) until the next write restores the file.
      const table = await readPinFile(this.#file!, () => copyTable(this.#table));
      // A write of ours adopted a fresher read meanwhile; a later change of the file polls again.
      if (epoch === this.#epoch) this.#adopt(table);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.#logger?.warn({ err: (err as Error).message, file: this.#file }, 'could not re-read the pins file; keeping the pins in memory');
    }
  }

  /** Takes a table read from the file as the truth, with this process's unsaved sightings on top. */
  #adopt(next: PinTable): void {
    this.#epoch++;
    for (const b of this.#unsaved) observeIn(next, b.upstream, b.sightings, b.pinnedInConfig, b.at);
    const { approved, other } = approvalsBetween(this.#table, next);
    const rejected = rejectionsBetween(this.#table, next);
    this.#table = next;
    if (rejected.length > 0) this.onRejected?.(rejected, true);
    if (approved.length > 0) this.onApproved?.(approved, true);
    if (other.length > 0) this.onApproved?.(other, false);
  }

  async observe(upstream: string, sightings: readonly Sighting[], pinnedInConfig: boolean): Promise<Observation[]> {
    const at = new Date().toISOString();
    const before = JSON.stringify(this.#table[upstream] ?? null);
    const obs = observeIn(this.#table, upstream, sightings, pinnedInConfig, at);
    if (this.#file && JSON.stringify(this.#table[upstream] ?? null) !== before) {
      this.#unsaved.push({ upstream, sightings, pinnedInConfig, at });
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

  /**
   * The file as it is now, for a read-modify-write under its lock. A file removed while the gateway runs
   * is the gateway's pins in memory, not an empty table: adopted, that emptied every upstream of its
   * approvals, and the next listing of each was a first sighting that approved whatever it held (a
   * changed definition included). A store that is not running (the CLI) reads a missing file as empty.
   */
  #readForWrite(): Promise<PinTable> {
    if (!this.#watching) return readPinFile(this.#file!);
    return readPinFile(this.#file!, () => {
      this.#logger?.warn({ file: this.#file }, 'the pins file was removed while the gateway runs; writing it again from the pins in memory');
      return copyTable(this.#table);
    });
  }

  async #flush(): Promise<void> {
    const file = this.#file!;
    try {
      await withPinFileLock(file, async () => {
        const batch = this.#unsaved.length;
        // What is unsaved is in the table in memory too: replayed on it, it changes nothing.
        const table = await this.#readForWrite();
        for (const b of this.#unsaved.slice(0, batch)) observeIn(table, b.upstream, b.sightings, b.pinnedInConfig, b.at);
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
      const table = await this.#readForWrite();
      const done = approveIn(table, upstream, items);
      if (done.length > 0) await writePinFile(this.#file!, table);
      this.#adopt(table);
      return done;
    });
  }

  async reject(upstream: string, items: ReadonlyArray<{ tool: string; hash: string }>): Promise<RejectedPin[]> {
    if (!this.#file) {
      const done = rejectIn(this.#table, upstream, items);
      if (done.length > 0) this.onRejected?.(done, true);
      return done;
    }
    // As approve: under the lock, on the file as it is now; #adopt reports it (here and in every reader).
    return withPinFileLock(this.#file, async () => {
      const table = await this.#readForWrite();
      const done = rejectIn(table, upstream, items);
      if (done.length > 0) await writePinFile(this.#file!, table);
      this.#adopt(table);
      return done;
    });
  }

  async table(upstreams: readonly string[]): Promise<PinTable> {
    // The CLI reads the file as it is now; a running gateway's memory is ahead of its file by one flush at most.
    const source = this.#file && !this.#watching ? await readPinFile(this.#file) : this.#table;
    const out: PinTable = emptyTable();
    for (const u of upstreams) if (source[u]) out[u] = source[u];
    // A copy on null-prototype objects (structuredClone would put tools named "__proto__" back at risk).
    return copyTable(out);
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
