import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The web console's files: console/ at the package root (beside src/ and dist/, so the same path works
 * from both), plain HTML, CSS and ES modules with no build step. Read once when the admin listener
 * starts: a handful of small files, answered from memory with an ETag.
 */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

/**
 * For every admin response, the console's pages included: nothing but this origin's own files (no
 * inline script or style, no eval), never framed, no referrer leaking the admin address.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The console's files by name (index.html included); empty, with the reason, when the folder is missing. */
export function loadConsoleAssets(dir = CONSOLE_DIR): { assets: ReadonlyMap<string, Asset>; problem: string | undefined } {
  const assets = new Map<string, Asset>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    return { assets, problem: `the console's files are missing (${dir}: ${(err as NodeJS.ErrnoException).code}); the admin API works without them` };
  }
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(join(dir, name));
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return { assets, problem: assets.has('index.html') ? undefined : `the console's index.html is missing in ${dir}` };
}
