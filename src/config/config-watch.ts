import { watch, readFileSync, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { contentDigest } from './source-digest.js';

/** How long the file must be quiet before a change counts: editors and ConfigMap updates write in steps. */
const SETTLE_MS = 300;

function digest(file: string): string | undefined {
  try {
    return contentDigest(readFileSync(file));
  } catch {
    return undefined; // gone for a moment (an editor's rename, a ConfigMap's symlink swap)
  }
}

/**
 * Calls `onChange` when the config file's content changes. The directory is watched, not the file: a
 * Kubernetes ConfigMap update replaces a symlink (..data) and editors replace the file, either of which
 * ends a watch on the file itself. Only a change of content counts. Returns the function that stops it.
 *
 * `loaded`: the digest of the content in force (sourceDigest). The watch starts once the gateway has
 * started its upstreams, seconds after the file was read; an edit made meanwhile raised no event the
 * watch saw and was its starting point, so it was never loaded. The file is compared with `loaded` once
 * the watch is up.
 */
export function watchConfigFile(file: string, onChange: () => void, loaded?: string): () => void {
  let last = loaded ?? digest(file);
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    const now = digest(file);
    if (now === undefined || now === last) return;
    last = now;
    onChange();
  };
  const name = basename(file);
  const watcher: FSWatcher = watch(dirname(file), (_event, changed) => {
    if (changed !== null && changed !== name && changed !== '..data') return;
    clearTimeout(timer);
    timer = setTimeout(check, SETTLE_MS);
  });
  watcher.on('error', () => {}); // the directory went away: nothing more to watch
  timer = setTimeout(check, SETTLE_MS);
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
