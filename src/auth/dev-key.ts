import { isLoopbackHost } from '../config/loopback.js';
import type { Config } from '../config/schema.js';
import { readPublicJwks } from './key-source.js';

/**
 * The public half of deploy/dev-keys/dev-private.jwk.json (Ed25519, kid switchboard-dev-1), whose private
 * half ships with the repository and the npm package: anyone can sign a token with it. Known by the key
 * itself, not by its file name or kid: a renamed copy, or the same key as PEM, is the same key.
 */
const PUBLISHED_DEV_KEY_X = 'owtWc1XN1i10hKaxAAFooCrNIUlQoHwx5QgcRSFZ9eM';

/** Whether some of `keys` (JWKs, as a file or a fetched key set holds them) is the published development key. */
export function holdsPublishedDevKey(keys: readonly object[]): boolean {
  return keys.some((k) => {
    const { kty, crv, x } = k as { kty?: unknown; crv?: unknown; x?: unknown };
    return kty === 'OKP' && crv === 'Ed25519' && x === PUBLISHED_DEV_KEY_X;
  });
}

/** What anyone holding the published key can do, and what to do about it: the end of every warning about it. */
export const DEV_KEY_RISK = "anyone can sign tokens this gateway accepts, for any tenant and scope, the admin scope included; use your identity provider's keys";

/** The files of auth.keys that hold the published development key (one that cannot be read: said where keys are read). */
function devKeyFiles(keys: readonly string[]): string[] {
  return keys.filter((file) => {
    try {
      return holdsPublishedDevKey(readPublicJwks(file));
    } catch {
      return false;
    }
  });
}

/**
 * How a token the gateway accepts can reach it from beyond this machine (a non-loopback server.host or
 * server.publicUrl, or an admin API on a non-loopback admin.host: it takes a JWT with admin.scope), or undefined.
 */
export function beyondLoopback(config: Config): string | undefined {
  const { server, admin } = config;
  if (!isLoopbackHost(server.host)) return `it listens on ${server.host}`;
  const url = server.publicUrl;
  if (url !== undefined && URL.canParse(url) && !isLoopbackHost(new URL(url).hostname)) return `its server.publicUrl is ${url}`;
  if (admin.enabled && !isLoopbackHost(admin.host)) return `its admin API listens on ${admin.host}`;
  return undefined;
}

/**
 * Why trusting the published development key is dangerous on this config, as a warning naming the key's
 * files; undefined when it trusts no such key (or auth is off), or is reachable on loopback alone (the
 * quick start, where only local processes can present a token).
 */
export function devKeyExposure(config: Config): { files: string[]; message: string } | undefined {
  if (config.auth.mode !== 'jwt') return undefined;
  const where = beyondLoopback(config);
  const files = where === undefined ? [] : devKeyFiles(config.auth.keys);
  if (files.length === 0) return undefined;
  return {
    files,
    message: `auth.keys trusts the published development key (${files.join(', ')}: kid switchboard-dev-1 of deploy/dev-keys, whose private half ships with Switchboard) and ${where}: ${DEV_KEY_RISK} (auth.jwksUrl, or its public keys in auth.keys)`,
  };
}
