import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { WrittenPath } from './relative-paths.js';
import type { Config } from './schema.js';
import { isUrlIssuer } from './issuer-url.js';
import { isLoopbackHost } from './loopback.js';
import { sharedUserTokenWarnings } from './shared-user-tokens.js';
import { stdioReachWarnings } from './stdio-reach-warnings.js';

/** The least auth.jwksCooldownMs said nothing of: at most one key-set fetch a second per replica. */
const JWKS_COOLDOWN_FLOOR_MS = 1000;

/** Authorization servers that clients cannot use for OAuth discovery (RFC 9728 metadata): the same rule app.ts applies when it leaves them out. */
function authWarnings(cfg: Config): string[] {
  if (cfg.auth.mode !== 'jwt') return [];
  const out: string[] = [];
  const { issuer, authorizationServers } = cfg.auth;
  if (authorizationServers.length === 0 && issuer !== undefined && !isUrlIssuer(issuer)) {
    out.push(
      `auth.issuer: ${JSON.stringify(issuer)} is not a URL, so it cannot be the authorization server of the protected resource metadata (RFC 9728), which OAuth clients such as mcp-remote read first; use the issuer's URL (tokens must carry the same "iss"), or set auth.authorizationServers`,
    );
  }
  if (cfg.server.publicUrl === undefined) {
    const aud = cfg.auth.audience.length > 0 ? '' : `, and tokens must carry the audience http://${cfg.server.host}:${cfg.server.port} (or that plus an endpoint's path), a URL no client is given`;
    out.push(
      `server.publicUrl: not set, so the protected resource metadata (and the resource_metadata of every 401) names whatever Host a request carries${aud}; set server.publicUrl to the URL clients connect to`,
    );
  }
  // The key set decides whose tokens are trusted: fetched in the clear from another host, whoever is on the
  // path answers with keys of their own. The host alone is named: the URL may carry credentials.
  const jwks = cfg.auth.jwksUrl === undefined ? undefined : new URL(cfg.auth.jwksUrl);
  if (jwks?.protocol === 'http:' && !isLoopbackHost(jwks.hostname)) {
    out.push(`auth.jwksUrl: fetched over plain http from ${jwks.host}: anyone on the network path (or who spoofs its name) can answer with a key set of their own and sign tokens for any tenant and scope, the admin API's included; use https`);
  }
  // Valid (tests and a local issuer use 0 to see a rotation at once), but each token naming an unknown kid,
  // forged ones too, is a fetch: one per request from anyone who reaches the gateway.
  const cooldown = cfg.auth.jwksCooldownMs;
  if (jwks && cooldown < JWKS_COOLDOWN_FLOOR_MS) {
    out.push(`auth.jwksCooldownMs: ${cooldown} ms: every token naming an unknown kid, forged ones included, makes the gateway fetch the key set again, so anyone who reaches it can make it hammer the identity provider; set at least ${JWKS_COOLDOWN_FLOOR_MS} (default 30000) outside tests`);
  }
  authorizationServers.forEach((s, i) => {
    if (!isUrlIssuer(s)) out.push(`auth.authorizationServers[${i}]: ${JSON.stringify(s)} is not an http(s) URL without query or fragment; it is left out of the metadata, and OAuth clients cannot discover an authorization server there`);
  });
  return out;
}

/** Programs and paths the config names that are not there: the upstream would fail at every start. */
function pathWarnings(paths: readonly WrittenPath[], exists: (p: string) => boolean): string[] {
  return paths
    .filter((p) => !exists(p.absolute))
    .map((p) => {
      const how = p.written === p.absolute ? '' : ` (${JSON.stringify(p.written)}, relative to ${p.base === 'cwd' ? 'the upstream\'s cwd' : 'the config file\'s directory'})`;
      return `${p.at}: ${p.absolute}${how} does not exist; ${p.consequence ?? 'this upstream cannot start'}`;
    });
}

const executable = (p: string): boolean => {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** A bare command is looked up on the gateway's PATH at each start (src/sandbox/launch-plan.ts): a typo there never starts. */
function commandWarnings(cfg: Config, env: NodeJS.ProcessEnv): string[] {
  const dirs = (env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  return cfg.upstreams.flatMap((u, i) =>
    u.transport !== 'stdio' || u.command.includes('/') || dirs.some((d) => executable(join(d, u.command)))
      ? []
      : [`upstreams[${i}].command: ${JSON.stringify(u.command)} is not on the gateway's PATH; this upstream cannot start (install it, or write its path)`],
  );
}

/**
 * What is valid but will not work as meant: reported by check-config and logged by serve at start,
 * which goes on (a missing server fails its own upstream, not the gateway).
 */
export function configWarnings(cfg: Config, paths: readonly WrittenPath[], exists: (p: string) => boolean = existsSync, env: NodeJS.ProcessEnv = process.env): string[] {
  return [...authWarnings(cfg), ...pathWarnings(paths, exists), ...commandWarnings(cfg, env), ...tracingWarnings(cfg, env), ...stdioReachWarnings(cfg), ...sharedUserTokenWarnings(cfg), ...auditWarnings(cfg), ...sharedCallbackWarnings(cfg)];
}

/** Tracing on with nowhere configured to send spans: the exporter's default is a collector on this host. */
function tracingWarnings(cfg: Config, env: NodeJS.ProcessEnv): string[] {
  const t = cfg.tracing;
  if (!t.enabled || t.endpoint !== undefined || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) return [];
  // OTEL_SDK_DISABLED=true turns tracing off whatever the file says (load-tracing.ts): no spans go anywhere.
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return [];
  return ['tracing.endpoint: not set (nor OTEL_EXPORTER_OTLP_ENDPOINT): spans go to http://localhost:4318/v1/traces, where a collector must listen; set the collector\'s URL'];
}

/** A plain hash of the arguments in the audit log: a short or guessable one is found by hashing guesses. */
function auditWarnings(cfg: Config): string[] {
  if (!cfg.audit.enabled || !cfg.audit.hashArguments || cfg.audit.hashKey !== undefined) return [];
  return [
    'audit.hashArguments: without audit.hashKey the log holds a plain SHA-256 of each call\'s arguments, and a short or guessable one (a PIN, an account number, a name) is found by hashing guesses; set audit.hashKey (${SWITCHBOARD_AUDIT_HASH_KEY}, openssl rand -base64 32) for an HMAC only its holders can test',
  ];
}

/**
 * Two user-oauth upstreams on the one /oauth/callback (`callback: shared`): one's authorization server can
 * send the browser on to the other's and have that server's code redeemed at its own token endpoint (the
 * mix-up attack), stopped only when the servers name themselves (RFC 9207 iss). See upstreamRedirectUri.
 */
function sharedCallbackWarnings(cfg: Config): string[] {
  const shared = cfg.upstreams.filter((u) => u.auth?.type === 'user-oauth' && u.auth.callback === 'shared').map((u) => u.name);
  if (shared.length < 2) return [];
  return [`upstreams ${shared.join(', ')}: auth.callback shared: their authorization servers all send codes back to <publicUrl>/oauth/callback, so one of them can have another's code redeemed at its own token endpoint (the mix-up attack) unless both send iss (RFC 9207); register <publicUrl>/oauth/callback/upstream/<name> at each and drop callback: shared`];
}
