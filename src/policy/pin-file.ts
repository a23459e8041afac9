import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { copyTable, emptyTable, type PinTable } from './pin-store.js';

const VERSION = 1;
/** A lock older than this was left by a process that died while holding it. */
const STALE_LOCK_MS = 10_000;
const LOCK_WAIT_MS = 5_000;

/**
 * The pins file: `{ "version": 1, "upstreams": { upstream: { tool: { approved, pending } } } }`; absent
 * means empty, or what `absent` gives (a running gateway's pins: see MemoryPinStore).
 */
export async function readPinFile(file: string, absent: () => PinTable = emptyTable): Promise<PinTable> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return absent();
    throw err;
  }
  return parsePinFile(file, text);
}

/** How serve and check-config word a pins file they cannot start from: the same line from both. */
export function pinsFileProblem(why: string): string {
  return `pinning.file: ${why}; repair it, or move it away to start from no pins (every tool is then pinned as first seen)`;
}

/** The table of a pins file's text; throws saying what is wrong (read at start, and by check-config). */
export function parsePinFile(file: string, text: string): PinTable {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`pins file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const d = doc as { version?: unknown; upstreams?: unknown };
  if (d === null || typeof d !== 'object' || d.version !== VERSION || d.upstreams === null || typeof d.upstreams !== 'object') {
    throw new Error(`pins file ${file} is not a version ${VERSION} pins file ({"version": 1, "upstreams": {...}})`);
  }
  // JSON.parse keeps a "__proto__" key as an own property; the copy keeps it on null-prototype objects.
  return copyTable(d.upstreams);
}

/**
 * Replaces the file in one step (temporary file, fsync, rename in the same directory): a reader — the
 * gateway polling it, the CLI — sees the old table or the new one, never half of one.
 */
export async function writePinFile(file: string, table: PinTable): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'w', 0o644);
  try {
    await fh.writeFile(`${JSON.stringify({ version: VERSION, upstreams: table }, null, 2)}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/**
 * Runs fn holding `<file>.lock`, so the gateway's sightings and the CLI's approvals never overwrite each
 * other's read-modify-write. A lock left behind by a dead process is taken over after STALE_LOCK_MS.
 */
export async function withPinFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  await mkdir(dirname(file), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fh = await open(lock, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > STALE_LOCK_MS) {
        await unlink(lock).catch(() => {});
        continue;
      }
      if (Date.now() > deadline) throw new Error(`pins file ${file} is locked by another process (${lock}); retry, or remove the lock if no switchboard process is running`);
      await sleep(20);
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => {});
  }
}
