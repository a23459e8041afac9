import { createHash } from 'node:crypto';
import type { Config } from './schema.js';

/** The configs read from a file, with the SHA-256 of the bytes each was read from. */
const digests = new WeakMap<Config, string>();

export function contentDigest(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Notes that `config` was read from `bytes`. */
export function recordSource(config: Config, bytes: Buffer): void {
  digests.set(config, contentDigest(bytes));
}

/**
 * The digest of the file content a config was read from (readConfigFile), or undefined for one built
 * otherwise. Kept beside the config rather than passed along with it, so that whoever builds a gateway
 * from a config read from a file gives the file watch what was loaded, not what the file holds later.
 */
export function sourceDigest(config: Config): string | undefined {
  return digests.get(config);
}
