import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors, jwksCache, type CompactJWSHeaderParameters, type ExportedJWKSCache, type FlattenedJWSInput, type JWK, type JWTVerifyGetKey, type RemoteJWKSet as JoseRemoteSet } from 'jose';
import type { AuthConfig } from '../config/schema.js';
import { cooledKeySetFetch, type KeySetFetchLog } from './key-set-fetch.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

/** One PEM block, its label captured (RFC 7468). */
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * The public key of each PEM block of a file (SPKI, a certificate, or a private key, whose public half is
 * used), the same key once. Only the first was read: a key appended to the file (a rotation, a bundle)
 * verified nothing, and nothing said so. "EC PARAMETERS" (openssl ecparam -genkey writes it before the
 * key) holds none.
 */
function pemPublicJwks(text: string): JWK[] {
  const blocks = [...text.matchAll(PEM_BLOCK)].filter((m) => m[1] !== 'EC PARAMETERS').map((m) => m[0]);
  // None well formed: as before, the whole text, for Node's own error.
  const keys = (blocks.length > 0 ? blocks : [text]).map((pem) => createPublicKey(pem).export({ format: 'jwk' }) as JWK);
  // A private key beside its certificate is one key, not two candidates.
  return [...new Map(keys.map((k) => [JSON.stringify(k), k])).values()];
}

/** Reads a PEM (every key it holds: see pemPublicJwks) or a JWK / JWKS file into public JWKs. */
export function readPublicJwks(file: string): JWK[] {
  const text = readFileSync(file, 'utf8');
  if (text.includes('-----BEGIN')) return pemPublicJwks(text);
  const doc = JSON.parse(text) as JWK | { keys: JWK[] };
  const keys = 'keys' in doc && Array.isArray(doc.keys) ? doc.keys : [doc as JWK];
  return keys.map((k) => {
    if (k.kty === 'oct') throw new Error(`${file}: symmetric keys belong in auth.hmacSecret, not in auth.keys`);
    const pub: Record<string, unknown> = { ...k };
    for (const m of PRIVATE_MEMBERS) delete pub[m];
    return pub as JWK;
  });
}

/**
 * How long a verified token may be kept (auth.tokenCache). With a JWKS, at most half of
 * jwksCacheMaxAgeMs, and the key set is kept for the rest (keySource): a token checked just before the
 * set is refetched is kept at most that long after, so a key withdrawn from the issuer's set stops
 * working within jwksCacheMaxAgeMs of its withdrawal, cached tokens included, as it would without the
 * cache. With static keys, until a reload (which builds a new Authenticator).
 */
export function keptTokenMaxAgeMs(cfg: AuthConfig): number {
  if (cfg.tokenCache.maxEntries === 0) return 0;
  return cfg.jwksUrl ? Math.min(cfg.tokenCache.maxAgeMs, Math.floor(cfg.jwksCacheMaxAgeMs / 2)) : cfg.tokenCache.maxAgeMs;
}

/** The issuer's key set as fetched (and cached) for some settings: what `settings` names. */
export interface RemoteKeySet {
  readonly settings: string;
  readonly get: JWTVerifyGetKey;
}

/**
 * The issuer's key set (auth.jwksUrl), or `reuse` when it was made for the same URL and settings: a
 * reload (every one builds verification anew, for key files) keeps the keys it fetched. A fresh set held
 * none, so a reload while the issuer was unreachable turned every client away (503) until it was back,
 * where the set in hand had kept them served. The issuer's rotations reach it as before (unknown kid).
 */
export function remoteKeySet(cfg: AuthConfig, reuse?: RemoteKeySet, log?: KeySetFetchLog): RemoteKeySet | undefined {
  if (!cfg.jwksUrl) return undefined;
  // At least the cooldown: jose refetches a set past its age for every token, forged ones included (its
  // cooldown bounds only the refetch for an unknown kid), so a jwksCacheMaxAgeMs of 0 was a fetch per request.
  const cacheMaxAge = Math.max(cfg.jwksCacheMaxAgeMs - keptTokenMaxAgeMs(cfg), cfg.jwksCooldownMs);
  const settings = JSON.stringify([cfg.jwksUrl, cfg.jwksCooldownMs, cacheMaxAge, cfg.jwksTimeoutMs, cfg.jwksStaleIfErrorMs]);
  if (reuse?.settings === settings) return reuse;
  // jose writes each set it fetched here, with the time (uat): what heldWhileFailing falls back on.
  const held: Partial<ExportedJWKSCache> = {};
  const { url, headers } = withoutCredentials(cfg.jwksUrl);
  const remote = createRemoteJWKSet(url, {
    headers,
    cooldownDuration: cfg.jwksCooldownMs,
    cacheMaxAge,
    timeoutDuration: cfg.jwksTimeoutMs,
    [customFetch]: cooledKeySetFetch(cfg.jwksCooldownMs, log),
    [jwksCache]: held as ExportedJWKSCache,
  });
  return { settings, get: heldWhileFailing(remote, held, { usableMs: cacheMaxAge + cfg.jwksStaleIfErrorMs, cooldownMs: cfg.jwksCooldownMs }, log) };
}

/**
 * The key set URL without its user name and password, which go as HTTP Basic credentials (RFC 7617:
 * user-id ":" password, as they read percent-decoded): Node's fetch refuses to build a request from a
 * URL that carries them (a TypeError), so every fetch of such a jwksUrl failed before it left the gateway.
 */
function withoutCredentials(jwksUrl: string): { url: URL; headers: Record<string, string> } {
  const url = new URL(jwksUrl);
  if (url.username === '' && url.password === '') return { url, headers: {} };
  const basic = Buffer.from(`${decoded(url.username)}:${decoded(url.password)}`).toString('base64');
  url.username = '';
  url.password = '';
  return { url, headers: { authorization: `Basic ${basic}` } };
}

/** Percent-decoded, or as written when that is no valid escape (a stray "%"). */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The keys of one fetch (jose's uat), as a local set; whether a refetch of them failed, and when one goes out again. */
interface HeldKeys {
  uat: number;
  get: JWTVerifyGetKey;
  failed: boolean;
  retryAt: number;
}

/**
 * jose's remote set, whose keys stay in use while refetching them fails, up to `usableMs` after their
 * fetch (auth.jwksStaleIfErrorMs past their age). Once the set in hand is older than its cacheMaxAge,
 * jose refetches it for every token and throws when that fails; with the failed fetch not tried again
 * within jwksCooldownMs (cooledKeySetFetch), one failed refetch (a 502 from the issuer, a timeout) turned
 * every token not kept verified away (503) for the cooldown, and all of them for as long as the issuer
 * stayed down. Once a refetch of them failed, the next ones go in the background (one at a time, at most
 * once per cooldown) while they answer: each waited up to jwksTimeoutMs, every cooldown, for a hung
 * issuer. Only a set past its age falls back: a kid unknown to a fresh set whose refetch failed, or one
 * the held keys lack, is still the fetch's failure (503), never a bad token (401).
 */
function heldWhileFailing(remote: JoseRemoteSet, held: Partial<ExportedJWKSCache>, o: { usableMs: number; cooldownMs: number }, log?: KeySetFetchLog): JWTVerifyGetKey {
  const { usableMs, cooldownMs } = o;
  let kept: HeldKeys | undefined;
  /** The keys in hand when the set is past its age and they may still be used, else undefined. */
  const pastAge = (): HeldKeys | undefined => {
    const { uat, jwks } = held;
    if (remote.fresh || uat === undefined || jwks === undefined || !(Date.now() < uat + usableMs)) return undefined;
    if (kept?.uat !== uat) kept = { uat, get: createLocalJWKSet(jwks), failed: false, retryAt: -Infinity };
    return kept;
  };
  const failed = (k: HeldKeys): void => {
    k.retryAt = performance.now() + cooldownMs;
    if (k.failed) return;
    k.failed = true;
    const fields = { fetchedAt: new Date(k.uat).toISOString(), until: new Date(k.uat + usableMs).toISOString() };
    log?.warn(fields, 'auth.jwksUrl: refetching the key set failed; the keys last fetched stay in use until it succeeds, at most until auth.jwksStaleIfErrorMs past their age');
  };
  return async (header, token) => {
    const keys = pastAge();
    if (keys?.failed) {
      if (!remote.reloading && performance.now() >= keys.retryAt) void remote.reload().catch(() => failed(keys));
      return fromHeld(keys, header, token, () => remote(header, token));
    }
    try {
      return await remote(header, token);
    } catch (err) {
      // Still past its age: its refetch failed (one that succeeded made it fresh).
      const stale = pastAge();
      if (!stale) throw err;
      failed(stale);
      return fromHeld(stale, header, token, () => Promise.reject(err));
    }
  };
}

/** The key from the keys in hand, or what `otherwise` says when they hold none for the token. */
async function fromHeld(keys: HeldKeys, header: CompactJWSHeaderParameters, token: FlattenedJWSInput, otherwise: () => Promise<Key>): Promise<Key> {
  try {
    return await keys.get(header, token);
  } catch (err) {
    if (err instanceof errors.JWKSNoMatchingKey) return otherwise();
    throw err;
  }
}

/**
 * The verification key for a token: HMAC only when explicitly enabled, then the static keys (those naming
 * no kid for any kid: anyKid), then the issuer's JWKS. jose refreshes the JWKS when a token names an unknown kid, at most once per cooldown,
 * so keys rotate without a restart; a fetch that failed is not tried again within the cooldown either
 * (cooledKeySetFetch).
 */
export function keySource(cfg: AuthConfig, remoteSet: RemoteKeySet | undefined = remoteKeySet(cfg)): JWTVerifyGetKey {
  const staticKeys = cfg.keys.flatMap(readPublicJwks);
  const local = staticKeys.length > 0 ? createLocalJWKSet({ keys: staticKeys }) : undefined;
  const unnamed = anyKid(staticKeys.filter((k) => k.kid === undefined));
  const remote = remoteSet?.get;
  const hmac: KeyObject | undefined = cfg.allowHmac && cfg.hmacSecret ? createSecretKey(Buffer.from(cfg.hmacSecret, 'utf8')) : undefined;

  return async (header, token) => {
    if (header.alg?.startsWith('HS')) {
      // Never verify an HS token with a public key (the classic RS/HS confusion).
      if (!hmac) throw new errors.JOSEAlgNotAllowed('HMAC tokens are not accepted');
      return hmac;
    }
    // No kid: a static key of its type says nothing of whether the issuer signed it (verifyJwt tries each).
    if (local && remote && header.kid === undefined) throw everyCandidate([local, remote], header, token);
    if (local) {
      try {
        return await local(header, token);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey) || !(remote || unnamed)) throw err;
      }
    }
    // A kid no static key names: the unnamed ones may have signed it (verifyJwt tries each), then the issuer's.
    if (unnamed) throw everyCandidate(remote ? [unnamed, remote] : [unnamed], header, token);
    if (remote) return remote(header, token);
    throw new errors.JWKSNoMatchingKey();
  };
}

/**
 * The static keys that name no kid (a PEM file cannot name one), as candidates for a token whatever kid it
 * names: jose matches a token's kid only against keys carrying it, so a PEM key verified no token naming a
 * kid, which nearly every issuer's do. Undefined when every static key names its kid.
 */
function anyKid(keys: JWK[]): JWTVerifyGetKey | undefined {
  if (keys.length === 0) return undefined;
  const set = createLocalJWKSet({ keys });
  return (header, token) => set({ ...header, kid: undefined }, token);
}

type Key = Awaited<ReturnType<JWTVerifyGetKey>>;

/** The keys of one set that qualify for a token: none, one, or the several jose names (JWKSMultipleMatchingKeys). */
async function* candidatesOf(set: JWTVerifyGetKey, header: CompactJWSHeaderParameters, token: FlattenedJWSInput): AsyncGenerator<Key> {
  let key: Key;
  try {
    key = await set(header, token);
  } catch (err) {
    if (err instanceof errors.JWKSMultipleMatchingKeys) return yield* err as unknown as AsyncIterable<Key>;
    if (err instanceof errors.JWKSNoMatchingKey) return;
    throw err;
  }
  yield key;
}

/**
 * The candidates of every set in turn, as jose's JWKSMultipleMatchingKeys (verifyJwt tries them, within
 * its bound). Lazily: the issuer's set is asked (and, at most once per cooldown, fetched as for an unknown
 * kid: only when none of its keys qualifies) only once the static keys have failed.
 */
function everyCandidate(sets: JWTVerifyGetKey[], header: CompactJWSHeaderParameters, token: FlattenedJWSInput): errors.JWKSMultipleMatchingKeys {
  const all = new errors.JWKSMultipleMatchingKeys();
  const keys = async function* (): AsyncGenerator<Key> {
    for (const set of sets) yield* candidatesOf(set, header, token);
  };
  (all as unknown as AsyncIterable<Key>)[Symbol.asyncIterator] = keys;
  return all;
}
