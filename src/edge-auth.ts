import { ANONYMOUS, Authenticator, type CredentialInput, type Principal } from './auth/index.js';
import type { Config } from './config/schema.js';
import type { EdgeAuth } from './edge/authorize-request.js';
import type { Gateway } from './gateway.js';
import type { Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';

/** The gateway's canonical URL: configured, or derived from how this request reached it. */
export function publicUrlOf(config: Config, host: string | undefined): string {
  return config.server.publicUrl?.replace(/\/$/, '') ?? `http://${host ?? `${config.server.host}:${config.server.port}`}`;
}

/** Accepted token audiences: what is configured, else the public URL and each endpoint's URL. */
export function audiencesOf(config: Config): string[] {
  if (config.auth.audience.length > 0) return config.auth.audience;
  const base = publicUrlOf(config, undefined);
  return [base, ...config.endpoints.map((e) => `${base}${e.path}`)];
}

/** The edge's authentication, whose token verification a reload can replace (keys, key set, audience). */
export interface ReloadableEdgeAuth extends EdgeAuth {
  /**
   * Token verification as `config` says (the mode itself needs a restart): built now, reading its key
   * files, which may throw; in use from the next request once the returned step runs. A reload builds
   * it before it changes anything, so a key file gone missing leaves nothing half-applied.
   */
  prepare(config: Config): () => void;
}

function authenticatorFor(config: Config, metrics: Metrics, log: Logger, previous?: Authenticator): Authenticator | undefined {
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
  let authenticator = authenticatorFor(config, metrics, log);
  let exchanging = exchangesTokens(config);
  const remember = (p: Principal | Promise<Principal>, input: CredentialInput): Principal | Promise<Principal> => {
    if (p instanceof Promise) return p.then((principal) => remember(principal, input));
    gateway.subjectTokens.remember(p, input.authorization[0]);
    return p;
  };
  const counted = (wait: number | Promise<number>): number | Promise<number> => {
    if (wait instanceof Promise) return wait.then(counted);
    if (wait > 0) metrics.rateLimited.inc({ limit: 'requests_per_second' });
    return wait;
  };
  return {
    prepare: (next) => {
      const built = authenticatorFor(next, metrics, log, authenticator);
      const exchanges = exchangesTokens(next);
      return () => {
        authenticator = built;
        exchanging = exchanges;
      };
    },
    authenticate: (input) => {
      if (!authenticator) return ANONYMOUS;
      const p = authenticator.authenticate(input);
      return exchanging ? remember(p, input) : p;
    },
    forbidden: (principal, path) => {
      const tenant = gateway.policy.tenant(principal);
      if (!tenant) return `tenant "${principal.tenant}" is not configured on this gateway`;
      if (!tenant.mayUseEndpoint(path)) return `tenant "${principal.tenant}" is not granted the endpoint ${path}`;
      return undefined;
    },
    admit: (principal, requests) => counted(gateway.policy.admit(principal, requests)),
    metadataUrl: (path, req) => `${publicUrlOf(config, req.headers.host)}/.well-known/oauth-protected-resource${path}`,
    onFailure: (reason) => {
      metrics.authFailures.inc({ reason });
      log.info({ reason }, 'request refused by authentication or policy');
    },
  };
}
