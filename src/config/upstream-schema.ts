import { z } from 'zod';
import { sentHeaders } from './header-schema.js';
import { httpUrl } from './http-url.js';
import { oauthClientChecks, oauthClientFields } from './oauth-client-schema.js';

// The upstreams part of the config schema (src/config/schema.ts puts the parts together).

/** What an upstream may be named (tenant policy reads a tool name that starts "<such a name>__" as that upstream's). */
export const UPSTREAM_NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

export const upstreamName = z
  .string()
  .regex(UPSTREAM_NAME, 'lowercase letters, digits and single hyphens, e.g. "github"')
  .max(40)
  .refine((s) => !s.includes('--'), 'must not contain "--" (the "__" delimiter stays unambiguous)');

const restart = z
  .object({
    initialDelayMs: z.number().int().min(10).default(250),
    maxDelayMs: z.number().int().min(10).default(30_000),
    /** A process must stay up this long before the backoff resets to its initial delay. */
    resetAfterMs: z.number().int().min(0).default(60_000),
  })
  .strict()
  .prefault({});

const pool = z
  .object({
    /** shared: number of instances that every session's requests are spread over. */
    size: z.number().int().min(1).max(64).default(1),
    /** per-session: started-and-initialized spares kept ready. */
    warm: z.number().int().min(0).max(256).default(0),
    /** per-session: most instances alive at once. */
    max: z.number().int().min(1).max(100_000).default(100),
    /** per-session: most instances one tenant may hold (default: max). Below max, no tenant can take them all. */
    perTenantMax: z.number().int().min(1).max(100_000).optional(),
    /** per-session: sessions that may wait for a free slot when max is reached. */
    queue: z.number().int().min(0).max(100_000).default(100),
    acquireTimeoutMs: z.number().int().min(1).default(30_000),
    /** per-user: a user's instances are stopped after this long without a request from them. */
    userIdleMs: z.number().int().min(1000).default(600_000),
  })
  .strict()
  .prefault({});

/** What every upstream kind shares: sharing, pooling, timeouts, restarts and resilience. */
const upstreamCommon = {
  name: upstreamName,
  /**
   * shared: one pool for everyone; per-tenant: one pool per tenant; per-user: one pool per principal
   * (issuer + subject + tenant), never shared between users; per-session: one instance per client session.
   */
  sharing: z.enum(['shared', 'per-tenant', 'per-user', 'per-session']).default('shared'),
  pool,
  requestTimeoutMs: z.number().int().min(1).default(60_000),
  /** A result larger than this fails its call with SWB_RESULT_TOO_LARGE (the gateway never relays it). */
  maxResultBytes: z.number().int().min(1024).default(8 * 1024 * 1024),
  /** Progress resets the timeout, but a request never runs longer than this. */
  maxRequestTimeoutMs: z.number().int().min(1).default(600_000),
  initTimeoutMs: z.number().int().min(1).default(30_000),
  /**
   * The protocol era the upstream is spoken to in. auto: found out at start (HTTP: server/discover
   * first, then initialize; stdio: initialize first, then server/discover) and remembered.
   */
  era: z.enum(['auto', 'legacy', 'modern']).default('auto'),
  /** How long an auto probe waits for server/discover before trying the other era. */
  eraProbeMs: z.number().int().min(100).default(3000),
  restart,
  /**
   * Requests in flight per instance; more wait in a queue of at most `queue`, beyond which they fail at once.
   * cancelledHoldMs: how long a call its client cancelled (or that timed out) keeps its slot unless the upstream answers it first
   * (a cancellation is advisory: the server may run it on); 0, given back at once.
   */
  concurrency: z
    .object({
      max: z.number().int().min(1).default(256),
      queue: z.number().int().min(0).default(1024),
      queueTimeoutMs: z.number().int().min(1).default(30_000),
      cancelledHoldMs: z.number().int().min(0).max(600_000).default(5000),
    })
    .strict()
    .prefault({}),
  /** A ping every intervalMs; `failures` missed pings in a row restart the instance. 0 disables it. */
  healthCheck: z
    .object({ intervalMs: z.number().int().min(0).default(30_000), timeoutMs: z.number().int().min(1).default(5_000), failures: z.number().int().min(1).default(3) })
    .strict()
    .prefault({}),
  /** After `failureThreshold` consecutive failures (timeouts, transport errors) calls fail fast for resetTimeoutMs, then one probe decides. */
  circuitBreaker: z
    .object({ failureThreshold: z.number().int().min(1).default(5), resetTimeoutMs: z.number().int().min(100).default(10_000) })
    .strict()
    .prefault({}),
  /**
   * Listing again an upstream that changes its tools or prompts without a list_changed notification.
   * intervalMs: a catalogue in use that was listed longer ago than this is listed afresh in the background
   * (one list per instance per interval, only while requests use it; 0: never). unknownToolMs: a call of
   * a name the catalogue does not know lists it afresh before answering "not found", at most once per this long per instance.
   */
  relist: z
    .object({
      intervalMs: z.union([z.literal(0), z.number().int().min(1000)]).default(60_000),
      unknownToolMs: z.number().int().min(1000).default(5_000),
    })
    .strict()
    .prefault({}),
  /** Tool pinning for this upstream; default: the top-level pinning.mode. */
  pinning: z.enum(['withhold', 'warn', 'off']).optional(),
};

/**
 * How a stdio server is confined. Omitted: the strict bubblewrap profile. `none` must be written out.
 * `limits` is for hosts without user namespaces (Kubernetes pods): rlimits, a scrubbed environment and
 * a non-root user, with the pod's securityContext and NetworkPolicy doing the rest.
 */
const sandboxLimits = z
  .object({
    /** RLIMIT_CPU: total CPU seconds of the process; unset by default (long-lived servers accumulate it). */
    cpuSeconds: z.number().int().min(1).optional(),
    /** RLIMIT_AS in MiB. Node.js needs about 2 GiB of address space to start. */
    addressSpaceMb: z.number().int().min(64).default(4096),
    /** RLIMIT_NOFILE. */
    openFiles: z.number().int().min(16).default(1024),
    /** RLIMIT_NPROC: processes and threads. Per sandbox with bubblewrap; per user id with `limits`. */
    processes: z.number().int().min(1).default(256),
    /** RLIMIT_FSIZE in MiB: the largest file the server may write. */
    fileSizeMb: z.number().int().min(1).default(1024),
  })
  .strict()
  .prefault({});

const sandboxProfile = z
  .object({
    type: z.enum(['bubblewrap', 'limits']).default('bubblewrap'),
    /** bubblewrap: keep the host's network (default: a private network namespace with loopback only). */
    network: z.boolean().optional(),
    /** bubblewrap: host paths visible read-only at the same place (the server's code, its data). */
    readOnly: z.array(z.string().min(1)).default([]),
    /** bubblewrap: host paths the server may write (the sandbox user needs write permission there). */
    writable: z.array(z.string().min(1)).default([]),
    /** bubblewrap: size of the private /tmp. */
    tmpSizeMb: z.number().int().min(1).default(64),
    /** bubblewrap: each writable path becomes a private tmpfs of this size (writes never reach the host's disk). */
    writableSizeMb: z.number().int().min(1).optional(),
    limits: sandboxLimits,
    /**
     * Run as this user. Default with a root gateway: a user id of the instance's own (from a pool) and
     * group 65534. Never root. Needs a root gateway to differ from the gateway's own user.
     */
    user: z.object({ uid: z.number().int().min(1, 'never root: use sandbox: none to run a server unconfined'), gid: z.number().int().min(0) }).strict().optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.type !== 'limits') return;
    if (s.writableSizeMb !== undefined) ctx.addIssue({ code: 'custom', path: ['writableSizeMb'], message: 'needs type bubblewrap: the limits profile cannot mount a size-limited filesystem' });
    for (const key of ['readOnly', 'writable'] as const) {
      if (s[key].length > 0) ctx.addIssue({ code: 'custom', path: [key], message: 'needs type bubblewrap: the limits profile cannot confine the filesystem (use the pod securityContext)' });
    }
    if (s.network !== undefined) ctx.addIssue({ code: 'custom', path: ['network'], message: 'needs type bubblewrap: the limits profile cannot confine the network (use a NetworkPolicy)' });
  });

const sandbox = z.union([z.literal('none'), sandboxProfile]).prefault({});

/** The gateway's own identity towards a remote upstream: OAuth 2 client credentials. */
const clientCredentials = z
  .object({
    type: z.literal('client-credentials'),
    tokenUrl: httpUrl('a client-credentials token endpoint'),
    clientId: z.string().min(1),
    clientSecret: z.string().min(1),
    scope: z.string().optional(),
    audience: z.string().optional(),
    /** Refresh this long before the token expires. */
    refreshSkewMs: z.number().int().min(0).default(60_000),
  })
  .strict();

/**
 * Each user's own identity towards a remote upstream (RFC 8693): the client's validated token is
 * exchanged at tokenEndpoint for one whose audience is the upstream. The client's token goes to that
 * authorization server only, never to the upstream.
 */
const tokenExchange = z
  .object({
    type: z.literal('token-exchange'),
    tokenEndpoint: httpUrl('a token-exchange endpoint'),
    clientId: z.string().min(1),
    /** The gateway's client secret (write it as ${ENV}), or clientSecretFile. */
    clientSecret: z.string().min(1).optional(),
    /** A file holding the client secret (a mounted secret); relative to the config file. */
    clientSecretFile: z.string().min(1).optional(),
    /** The upstream's identifier at the authorization server (the exchanged token's `aud`). */
    audience: z.string().min(1).optional(),
    /** RFC 8707 resource indicator: the upstream's URL. */
    resource: httpUrl('a resource indicator').optional(),
    scope: z.string().optional(),
    /**
     * Send the gateway's own client-credentials token as actor_token (the exchanged token then names
     * the gateway in its `act` claim): delegation rather than impersonation.
     */
    actorToken: z.boolean().default(true),
    /** Use an exchanged token until this long before it expires. */
    refreshSkewMs: z.number().int().min(0).default(30_000),
  })
  .strict()
  .refine((a) => (a.clientSecret === undefined) !== (a.clientSecretFile === undefined), { message: 'set clientSecret or clientSecretFile (one of them)', path: ['clientSecret'] });

/**
 * Each user's own consent (OAuth 2.1 authorization code + PKCE): the gateway is a client of the
 * upstream's authorization server; a user without a token is sent to /oauth/start by a URL elicitation,
 * and the tokens the callback receives are sealed in the vault (top-level `vault`).
 */
const userOAuth = oauthClientChecks(
  z
    .object({
      type: z.literal('user-oauth'),
      ...oauthClientFields,
      /** Absent with no endpoints: found from the upstream's RFC 9728 metadata. */
      authorizationServer: oauthClientFields.authorizationServer,
      /** RFC 8707 resource indicator; default: the upstream's URL (a stdio upstream: none unless set). */
      resource: oauthClientFields.resource,
      /** Refresh a stored token this long before it expires. */
      refreshSkewMs: z.number().int().min(0).default(60_000),
      /**
       * The redirect URI: `own`, <publicUrl>/oauth/callback/upstream/<name> (one per upstream, RFC 9700 §4.4.2:
       * the mix-up defence when servers send no iss); `shared`, <publicUrl>/oauth/callback, the one every
       * upstream used before 2026-12-07 (for a server where only that one is registered).
       */
      callback: z.enum(['own', 'shared']).default('own'),
    })
    .strict(),
);

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const stdioUpstream = z
  .object({
    ...upstreamCommon,
    transport: z.literal('stdio'),
    sandbox,
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    cwd: z.string().optional(),
    /** Only these variables reach the child (plus PATH/HOME/LANG defaults); never the gateway's environment. */
    // Names and values as a spawn takes them: Node refuses a NUL, and the kernel reads "A=B" as the name A.
    env: z
      .record(z.string(), z.string().regex(/^[^\0]*$/, 'a value without NUL'))
      .superRefine((env, ctx) => {
        for (const name of Object.keys(env)) if (!/^[^=\0]+$/.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'a variable name: not empty, no "=" or NUL' });
      })
      .default({}),
    maxLineBytes: z.number().int().min(1024).default(16 * 1024 * 1024),
    /**
     * The session's user's own token for the service the server acts on (token exchange or user consent),
     * handed to the child in the variable `tokenEnv` when it starts. Only with sharing: per-session, so a
     * process only ever holds one user's token.
     */
    auth: z.union([tokenExchange, userOAuth]).optional(),
    /** The variable the user's token is put in (e.g. GITHUB_TOKEN); needs auth. */
    tokenEnv: z.string().regex(ENV_NAME, 'an environment variable name, e.g. GITHUB_TOKEN').optional(),
  })
  .strict()
  .superRefine((u, ctx) => {
    if (u.auth === undefined) {
      if (u.tokenEnv !== undefined) ctx.addIssue({ code: 'custom', path: ['tokenEnv'], message: 'tokenEnv names where a user token goes: set auth (token-exchange or user-oauth) too' });
      return;
    }
    if (u.sharing !== 'per-session') ctx.addIssue({ code: 'custom', path: ['sharing'], message: `a stdio upstream with auth type ${u.auth.type} needs sharing: per-session (its process holds one user's token; "${u.sharing}" would share it)` });
    if (u.tokenEnv === undefined) ctx.addIssue({ code: 'custom', path: ['tokenEnv'], message: "a stdio upstream gets the user's token in an environment variable: name it (e.g. tokenEnv: GITHUB_TOKEN)" });
    else if (u.env[u.tokenEnv] !== undefined) ctx.addIssue({ code: 'custom', path: ['env', u.tokenEnv], message: `${u.tokenEnv} is where the user's token goes (tokenEnv): it cannot be set here too` });
    if (u.pool.warm > 0) ctx.addIssue({ code: 'custom', path: ['pool', 'warm'], message: "a spare process is started before its user is known, so it cannot hold a user's token: set warm to 0" });
    if (u.auth.type === 'user-oauth' && u.auth.authorizationServer === undefined && u.auth.authorizationEndpoint === undefined) {
      ctx.addIssue({ code: 'custom', path: ['auth', 'authorizationServer'], message: 'a stdio upstream has no URL to discover its authorization server from: set authorizationServer, or authorizationEndpoint and tokenEndpoint' });
    }
  });

const remoteUpstream = {
  ...upstreamCommon,
  /** Static headers sent with every request (use ${ENV} for credentials). Never the client's token. */
  headers: sentHeaders,
  auth: z.union([clientCredentials, tokenExchange, userOAuth]).optional(),
  http: z
    .object({
      connectTimeoutMs: z.number().int().min(1).default(10_000),
      /** For GETs, notifications and answers; a POST carrying a request waits for its headers as long as the request may run. */
      headersTimeoutMs: z.number().int().min(1).default(30_000),
      /**
       * Idle limit on a request's JSON answer (whose whole read its request timeout bounds); the deadline for the
       * whole read of an error's, a 202's or a notification's body, and of a token endpoint's (or authorization
       * server's) answer. SSE streams are exempt (they idle by design).
       */
      bodyTimeoutMs: z.number().int().min(1).default(60_000),
      maxConnections: z.number().int().min(1).default(64),
      keepAliveTimeoutMs: z.number().int().min(1).default(30_000),
      maxMessageBytes: z.number().int().min(1024).default(16 * 1024 * 1024),
    })
    .strict()
    .prefault({}),
};

/** A per-user credential makes an instance one user's: only per-user sharing keeps users apart. */
function perUserAuth(u: { sharing: string; auth?: { type: string } | undefined }, ctx: z.RefinementCtx): void {
  if ((u.auth?.type === 'token-exchange' || u.auth?.type === 'user-oauth') && u.sharing !== 'per-user') {
    ctx.addIssue({ code: 'custom', path: ['sharing'], message: `auth type ${u.auth.type} needs sharing: per-user (an instance carries one user's identity; "${u.sharing}" would share it)` });
  }
}

const streamableHttpUpstream = z.object({ ...remoteUpstream, url: httpUrl('the streamable-http transport'), transport: z.literal('streamable-http') }).strict().superRefine(perUserAuth);
const sseUpstream = z.object({ ...remoteUpstream, url: httpUrl('the sse transport'), transport: z.literal('sse') }).strict().superRefine(perUserAuth);

export const upstream = z.discriminatedUnion('transport', [stdioUpstream, streamableHttpUpstream, sseUpstream]);
