import { connectRedis } from './cluster/redis-connection.js';
import { loadConfig } from './config/load.js';
import { vaultKeyBytes } from './config/vault-schema.js';
import { createLogger } from './observability/logger.js';
import { terminalJson, terminalText as shown } from './observability/terminal-text.js';
import { CredentialVault, RedisVaultStore, type LinkInfo } from './upstream/index.js';

export interface LinksCommandInput {
  /** "list" or "revoke". */
  action: string | undefined;
  config: string;
  subject: string | undefined;
  upstream: string | undefined;
  tenant: string | undefined;
  issuer: string | undefined;
  json: boolean;
}

interface Output {
  write(s: string): unknown;
}

const NO_REDIS =
  "without Redis (store.redis or REDIS_URL) the vault lives in the running gateway's memory: list and revoke through its admin API (GET /links, DELETE /links/UPSTREAM?subject=…) or let the user DELETE /oauth/links/UPSTREAM";

function line(l: LinkInfo): string {
  return `${l.upstream}\t${shown(l.subject)}\t${shown(l.tenant)}\t${shown(l.issuer)}\tlinked ${l.linkedAt}\texpires ${l.expiresAt}${l.refreshable ? '\trefreshable' : ''}${l.state === 'expired' ? '\texpired' : ''}`;
}

/**
 * `switchboard links list|revoke`: users' links to user-oauth upstreams in the shared vault (Redis).
 * Metadata only: which user linked which upstream, when, until when; a token is never printed (nor
 * opened: revoking deletes the sealed entry, and needs no key).
 */
export async function linksCommand(input: LinksCommandInput, usage: string, out: Output = process.stdout, err: Output = process.stderr): Promise<number> {
  if (input.action !== 'list' && input.action !== 'revoke') {
    err.write(`switchboard links: expected "list" or "revoke"\n${usage}`);
    return 2;
  }
  if (input.action === 'revoke' && (!input.subject || !input.upstream)) {
    err.write(`switchboard links revoke: --sub and --upstream are required\n${usage}`);
    return 2;
  }
  const config = loadConfig(input.config);
  const redis = config.store.redis;
  if (!redis) {
    err.write(`switchboard links: ${NO_REDIS}\n`);
    return 1;
  }
  const conn = connectRedis(redis.url, createLogger('silent'), undefined, { enableOfflineQueue: true, retryStrategy: (n) => (n > 3 ? null : 200) });
  // The key only seals and opens; listing and deleting entries never do, so any 32 bytes serve without one.
  const vault = new CredentialVault(config.vault.key ? vaultKeyBytes(config.vault.key) : Buffer.alloc(32), [], new RedisVaultStore(conn, redis.keyPrefix), undefined, () => config.upstreams.filter((u) => u.auth?.type === 'user-oauth').map((u) => u.name));
  const filter = { subject: input.subject, upstream: input.upstream, tenant: input.tenant, issuer: input.issuer };
  try {
    const found = await vault.links(filter);
    if (input.action === 'list') {
      if (input.json) out.write(`${terminalJson(JSON.stringify(found, null, 2))}\n`);
      else if (found.length === 0) out.write('no links\n');
      else for (const l of found) out.write(`${line(l)}\n`);
      return 0;
    }
    if (found.length === 0) {
      err.write(`switchboard links revoke: no link of "${input.subject}" to upstream "${input.upstream}"\n`);
      return 1;
    }
    for (const l of found) {
      await vault.revoke(l.upstream, l);
      out.write(`revoked ${line(l)}\n`);
    }
    out.write("the sealed tokens are deleted; the user's next call asks for consent again\n");
    return 0;
  } catch (e) {
    err.write(`switchboard links: ${(e as Error).message}\n`);
    return 1;
  } finally {
    conn.disconnect();
  }
}
