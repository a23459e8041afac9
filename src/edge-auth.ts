import { decodeJwt } from 'jose';
import { ANONYMOUS, Authenticator, type CredentialInput, type Principal } from './auth/index.js';
import { DevKeyWatch } from './auth/dev-key-watch.js';
import type { KeySetFetchLog } from './auth/key-set-fetch.js';
import type { Config } from './config/schema.js';
import type { EdgeAuth } from './edge/authorize-request.js';
import type { Gateway } from './gateway.js';
import type { Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';

/** The gateway's canonical URL: configured, or derived from how this request reached it. */
export function publicUrlOf(config: Config, host: string | undefined): string {
  return config.server.publicUrl?.replace(/\/$/, '') ?? `http://${host ?? `${config.server.host}:${config.server.port}`}`;
}

/**
 * Accepted token audiences: what is configured, else the public URL and each endpoint's URL, as written
 * (the public URL first) and as their URL's href (RFC 3986 §6.2: the host lower-cased, no default port,
 * "/" for an empty path). A client asks the authorization server for the resource its discovery found
 * as that href (the SDK: resource=https://gw.example/, RFC 8707), which makes it the token's aud.
 */
export function audiencesOf(config: Config): string[] {
  if (config.auth.audience.length > 0) return config.auth.audience;
  const base = publicUrlOf(config, undefined);
  const written = [base, ...config.endpoints.map((e) => `${base}${e.path}`)];
  return [...new Set(written.flatMap((a) => [a, URL.canParse(a) ? new URL(a).href : a]))];
}

/**
 * The audiences that name one endpoint (its URL as written and as its href, see audiencesOf), by the
 * endpoint's path: a token for one endpoint's resource (RFC 8707: what a client asks for from the resource
 * its discovery found) is that endpoint's alone. Every audience accepted and not here (the public URL,
 * a configured one naming no endpoint) is the gateway's as a whole. The public URL's own forms stay the
 * gateway's even where an endpoint's URL is one of them.
 */
export function endpointAudiences(config: Config): ReadonlyMap<string, string> {
  const base = publicUrlOf(config, undefined);
  const gateway = new Set([base, URL.canParse(base) ? new URL(base).href : base]);
  const owners = new Map<string, string>();
  for (const e of config.endpoints) {
    const url = `${base}${e.path}`;
    for (const a of [url, URL.canParse(url) ? new URL(url).href : url]) if (!gateway.has(a)) owners.set(a, e.path);
  }
  return owners;
}

/**
 * Why a token may not be used on the endpoint at `path`, or undefined: each of its audiences names another
 * endpoint. Before, the default audiences (every endpoint's URL) were accepted on every endpoint, so a token
 * the authorization server issued for one (to a client, with a consent, meant for it alone) was taken by all.
 */
function otherEndpointOnly(owners: ReadonlyMap<string, string>, accepted: ReadonlySet<string>, principal: Principal, path: string): string | undefined {
  const audience = principal.audience;
  if (audience === undefined) return undefined;
  for (const a of audience) {
    if (!accepted.has(a)) continue;
    const owner = owners.get(a);
    if (owner === undefined || owner === path) return undefined;
  }
  return `the access token is invalid: it was issued for another endpoint's resource, not ${path} (its "aud" claim)`;
}

/** The audiences accepted, and those of them that name one endpoint (by the endpoint's path). */
interface Audiences {
  owners: ReadonlyMap<string, string>;
  accepted: ReadonlySet<string>;
}

/**
 * The endpoints a token is for when each of its accepted audiences names one, else undefined (one of
 * them is the gateway's as a whole). Off the request path: the admin API's check.
 */
function endpointsOnly({ owners, accepted }: Audiences, principal: Principal): string[] | undefined {
  const paths = new Set<string>();
  for (const a of principal.audience ?? []) {
    if (!accepted.has(a)) continue;
    const owner = owners.get(a);
    if (owner === undefined) return undefined;
    paths.add(owner);
  }
  return paths.size > 0 ? [...paths] : undefined;
}

/** The upstreams of the endpoints a token is for when it is for endpoints only (endpointsOnly), else undefined: a user's /oauth/links. */
function servedOnly(audiences: Audiences & { served: ReadonlyMap<string, readonly string[]> }, principal: Principal): ReadonlySet<string> | undefined {
  const only = endpointsOnly(audiences, principal);
  return only && new Set(only.flatMap((path) => audiences.served.get(path) ?? []));
}

/** Why the principal's tenant may not use the endpoint (not configured, or not granted it), or undefined. */
function tenantRefusal(gateway: Gateway, principal: Principal, path: string): string | undefined {
  const tenant = gateway.policy.tenant(principal);
  if (!tenant) return `tenant "${principal.tenant}" is not configured on this gateway`;
  if (!tenant.mayUseEndpoint(path)) return `tenant "${principal.tenant}" is not granted the endpoint ${path}`;
  return undefined;
}

/** Each endpoint's upstreams, by its path. */
function servedUpstreams(config: Config): ReadonlyMap<string, readonly string[]> {
  return new Map(config.endpoints.map((e) => [e.path, e.upstreams]));
}

/** Each endpoint's scopes (endpoints[].scopes), with their challenge value made once; endpoints with none are absent. */
export function endpointScopes(config: Config): ReadonlyMap<string, { scopes: readonly string[]; scope: string }> {
  const m = new Map<string, { scopes: readonly string[]; scope: string }>();
  for (const e of config.endpoints) if (e.scopes.length > 0) m.set(e.path, { scopes: e.scopes, scope: e.scopes.join(' ') });
  return m;
}

/** The endpoint's scopes the principal's token lacks, or undefined (it has them all, or there are none). */
function lackedScopes(needed: { scopes: readonly string[] } | undefined, principal: Principal): string[] | undefined {
  if (!needed) return undefined;
  const missing = needed.scopes.filter((s) => !principal.scopes.has(s));
  return missing.length > 0 ? missing : undefined;
}

/** The edge's authentication, whose token verification a reload can replace (keys, key set, audience). */
export interface ReloadableEdgeAuth extends EdgeAuth {
  /**
   * Token verification as `config` says (the mode itself needs a restart): built now, reading its key
   * files, which may throw; in use from the next request once the returned step runs. A reload builds
   * it before it changes anything, so a key file gone missing leaves nothing half-applied.
   */
  prepare(config: Config): () => void;
  /** What a key set fetch is given (the admin API's too): its failures go to the log, its keys to DevKeyWatch. */
  readonly keySets: KeySetFetchLog;
}

function authenticatorFor(config: Config, metrics: Metrics, log: KeySetFetchLog, previous?: Authenticator): Authenticator | undefined {
  if (config.auth.mode !== 'jwt') return undefined;
  // Prebuilt children: a label lookup per request would cost more than the count.
  const cached = metrics.authTokens.labels('cached');
  const verified = metrics.authTokens.labels('verified');
  return new Authenticator(config.auth, audiencesOf(config), (hit) => (hit ? cached : verified).inc(), previous, log);
}

/** Whether some upstream exchanges the client's token (only then is a verified token kept, in memory). */
function exchangesTokens(config: Config): boolean {
  return config.upstreams.some((u) => u.auth?.type === 'token-exchange');
}

/** What the front door asks of authentication and tenant policy, with failures counted and logged. */
export function edgeAuth(config: Config, gateway: Gateway, logger: Logger, metrics: Metrics): ReloadableEdgeAuth {
  const log = logger.child({ component: 'auth' });
  // Says so when the config or the issuer's key set trusts the published development key beyond loopback.
  const devKeys = new DevKeyWatch(config, metrics.devKeyExposed, log);
  let authenticator = authenticatorFor(config, metrics, devKeys.keySets);
  let exchanging = exchangesTokens(config);
  let audiences = { owners: endpointAudiences(config), accepted: new Set(audiencesOf(config)), served: servedUpstreams(config) };
  let scopes = endpointScopes(config);
  const remember = (p: Principal | Promise<Principal>, input: CredentialInput): Principal | Promise<Principal> => {
    if (p instanceof Promise) return p.then((principal) => remember(principal, input));
    gateway.subjectTokens.remember(p, input.authorization[0]);
    return p;
  };
  // Each request refused counts, as each is audited: a batch refused whole is as many as it holds.
  const counted = (wait: number | Promise<number>, requests: number): number | Promise<number> => {
    // A POST of one request (nearly all) settles through one function made here, not a closure per request.
    if (wait instanceof Promise) return requests === 1 ? wait.then(countedOne) : wait.then((ms) => counted(ms, requests));
    if (wait > 0) metrics.rateLimited.inc({ limit: 'requests_per_second' }, requests);
    return wait;
  };
  const countedOne = (ms: number) => counted(ms, 1) as number;
  return {
    prepare: (next) => {
      const built = authenticatorFor(next, metrics, devKeys.keySets, authenticator);
      const exchanges = exchangesTokens(next);
      const nextAudiences = { owners: endpointAudiences(next), accepted: new Set(audiencesOf(next)), served: servedUpstreams(next) };
      const nextScopes = endpointScopes(next);
      return () => {
        authenticator = built;
        exchanging = exchanges;
        audiences = nextAudiences;
        scopes = nextScopes;
        devKeys.configure(next);
      };
    },
    keySets: devKeys.keySets,
    authenticate: (input) => {
      if (!authenticator) return ANONYMOUS;
      const p = authenticator.authenticate(input);
      return exchanging ? remember(p, input) : p;
    },
    notFor: (principal, path) => otherEndpointOnly(audiences.owners, audiences.accepted, principal, path),
    upstreamsOnly: (principal) => servedOnly(audiences, principal),
    forbidden: (principal, path) => tenantRefusal(gateway, principal, path),
    // Without authentication (auth.mode none) there is no token to carry scopes: nothing to ask for.
    lacking: (principal, path) => (authenticator ? lackedScopes(scopes.get(path), principal) : undefined),
    scopeOf: (path) => scopes.get(path)?.scope,
    admit: (principal, requests) => counted(gateway.policy.admit(principal, requests), requests),
    metadataUrl: (path, req) => `${publicUrlOf(config, req.headers.host)}/.well-known/oauth-protected-resource${path}`,
    onFailure: (reason) => {
      metrics.authFailures.inc({ reason });
      log.info({ reason }, 'request refused by authentication or policy');
    },
  };
}

/**
 * The admin API's check of a JWT: the config in force's verification, built again after every reload
 * (`generation`: key files may hold new keys under the same names, and a key set and verified tokens must
 * not outlive the keys they came from). While a key file cannot be read, a JWT
 * is not checkable now (rejected with status 503, as with the issuer's key set out of reach) and the log
 * says why, once a reload: built where the admin API read its credentials, the error failed every admin
 * request, the static token's too, with a 500 naming the file to any caller.
 */
export class AdminJwtCheck {
  readonly #log: { warn(obj: object, msg: string): void };
  #built: { auth: Config['auth']; generation: number; authenticator: Authenticator; audiences: Audiences } | undefined;
  /** The generation whose key files could not be read (said once). */
  #unreadableAt: number | undefined;

  readonly #keySets: KeySetFetchLog;

  /** `keySets`: what its key set fetches are given (the edge's, so that DevKeyWatch sees them), else `log`. */
  constructor(log: { warn(obj: object, msg: string): void }, keySets: KeySetFetchLog = log) {
    this.#log = log;
    this.#keySets = keySets;
  }

  /** How a bearer JWT's scopes are found under `config` (auth.mode jwt). */
  verifier(config: Config, generation: number): (bearer: string) => Promise<ReadonlySet<string>> {
    const built = this.#authenticator(config, generation);
    const check = built ? scopesFor(config, built) : KEYS_UNREADABLE;
    const tolerance = config.auth.clockToleranceSec;
    return (bearer) =>
      check(bearer).catch((err: unknown) => {
        throw expiredAnyway(err, bearer, tolerance) ?? err;
      });
  }

  #authenticator(config: Config, generation: number): { authenticator: Authenticator; audiences: Audiences } | undefined {
    const built = this.#built;
    if (built?.auth === config.auth && built.generation === generation) return built;
    try {
      const authenticator = new Authenticator(config.auth, audiencesOf(config), undefined, built?.authenticator, this.#keySets);
      this.#built = { auth: config.auth, generation, authenticator, audiences: { owners: endpointAudiences(config), accepted: new Set(audiencesOf(config)) } };
      return this.#built;
    } catch (err) {
      if (this.#unreadableAt !== generation) this.#log.warn({ err: (err as Error).message }, 'the admin API cannot check JWTs: a key file of auth.keys cannot be read (answered 503 until it can; the static token still works)');
      this.#unreadableAt = generation;
      return undefined;
    }
  }
}

/** The scopes of a bearer JWT the admin API may take: verified as the edge verifies it, for the gateway as a whole. */
function scopesFor(config: Config, { authenticator, audiences }: { authenticator: Authenticator; audiences: Audiences }): (bearer: string) => Promise<ReadonlySet<string>> {
  return async (bearer) => {
    const principal = await authenticator.authenticate({ authorization: [`Bearer ${bearer}`], tokenInQuery: false });
    const only = endpointsOnly(audiences, principal);
    // The admin API is the gateway's as a whole: a token for one endpoint's resource alone (see
    // otherEndpointOnly) opened it before, to whoever held a token meant for that endpoint.
    if (only) throw new Error(`it was issued for the endpoint ${only.join(', ')} (its "aud" claim), not for the gateway as a whole: the admin API takes a token whose audience names no endpoint (${publicUrlOf(config, undefined)} by default)`);
    return principal.scopes;
  };
}

/**
 * A token whose own "exp" has passed, when the keys to check it cannot be had (a 503): refused as expired,
 * whatever its signature. Taken as "not checkable now" like a live one, a request with it was told to
 * retry, and a console stream signed in with it was kept at each minute's check for as long as the
 * issuer's key set stayed out of reach, getting every view and the audit tail. Only ever a refusal: an
 * unverified claim never admits anything.
 */
function expiredAnyway(err: unknown, bearer: string, toleranceSec: number): Error | undefined {
  if ((err as { status?: unknown } | null)?.status !== 503) return undefined;
  let exp: unknown;
  try {
    exp = decodeJwt(bearer).exp;
  } catch {
    return undefined;
  }
  if (typeof exp !== 'number' || exp + toleranceSec > Date.now() / 1000) return undefined;
  return new Error(`it expired at ${new Date(exp * 1000).toISOString()} (its "exp" claim)`);
}

const KEYS_UNREADABLE = async (): Promise<never> => {
  throw Object.assign(new Error('the gateway cannot read its verification keys (auth.keys; see its log)'), { status: 503 });
};
