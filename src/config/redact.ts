import type { Config } from './schema.js';

export const REDACTED = '[redacted]';

/**
 * A URL with its user information and any query (which may carry a key) replaced: the host stays
 * readable. The user name goes too: a token is often given as one (https://TOKEN@host, or
 * TOKEN:x-oauth-basic).
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username) u.username = REDACTED;
    if (u.password) u.password = REDACTED;
    if (u.search) u.search = `?${REDACTED}`;
    return u.href;
  } catch {
    return REDACTED;
  }
}

/** An upstream's auth block: its endpoints' URLs (token, authorization, issuer, resource) as redactUrl shows them. */
function redactUrls(o: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(o)) if (typeof v === 'string' && /(url|endpoint|server|resource)$/i.test(k)) o[k] = redactUrl(v);
}

const values = (o: Record<string, string>): Record<string, string> => Object.fromEntries(Object.keys(o).map((k) => [k, REDACTED]));

/**
 * The config as an operator may see it (the admin API): every secret the schema knows of replaced,
 * names and structure kept. Upstream `env` and `headers` values are all redacted: they are where
 * credentials go (${ENV}), and which of them are secret cannot be told.
 */
export function redactConfig(config: Config): Config {
  const c = structuredClone(config) as Config;
  if (c.auth.hmacSecret !== undefined) c.auth.hmacSecret = REDACTED;
  if (c.auth.jwksUrl !== undefined) c.auth.jwksUrl = redactUrl(c.auth.jwksUrl);
  if (c.store.redis?.advertiseUrl !== undefined) c.store.redis.advertiseUrl = redactUrl(c.store.redis.advertiseUrl);
  if (c.admin.token !== undefined) c.admin.token = REDACTED;
  if (c.modern.requestStateKey !== undefined) c.modern.requestStateKey = REDACTED;
  c.modern.requestStatePreviousKeys = c.modern.requestStatePreviousKeys.map(() => REDACTED);
  if (c.audit.hashKey !== undefined) c.audit.hashKey = REDACTED;
  if (c.vault.key !== undefined) c.vault.key = REDACTED;
  c.vault.previousKeys = c.vault.previousKeys.map(() => REDACTED);
  if (c.vault.verifyUser) {
    if (c.vault.verifyUser.clientSecret !== undefined) c.vault.verifyUser.clientSecret = REDACTED;
    redactUrls(c.vault.verifyUser as unknown as Record<string, unknown>);
  }
  if (c.store.redis) c.store.redis.url = redactUrl(c.store.redis.url);
  // The collector's credentials: headers (an API key) and a user:password or key in the endpoint's URL.
  c.tracing.headers = values(c.tracing.headers);
  if (c.tracing.endpoint !== undefined) c.tracing.endpoint = redactUrl(c.tracing.endpoint);
  if (c.store.redis?.forwardSecret !== undefined) c.store.redis.forwardSecret = REDACTED;
  for (const e of c.endpoints) {
    if (!e.tools.embeddings) continue;
    e.tools.embeddings.url = redactUrl(e.tools.embeddings.url);
    e.tools.embeddings.headers = values(e.tools.embeddings.headers);
  }
  for (const u of c.upstreams) {
    // Only a secret that is set: one read from clientSecretFile (a path, shown) has no clientSecret, and
    // "[redacted]" there told an operator of a secret configured inline that was not.
    if (u.auth?.clientSecret !== undefined) u.auth.clientSecret = REDACTED;
    if (u.auth) redactUrls(u.auth as unknown as Record<string, unknown>);
    if (u.transport === 'stdio') {
      u.env = values(u.env);
      continue;
    }
    u.headers = values(u.headers);
    u.url = redactUrl(u.url);
  }
  return c;
}
