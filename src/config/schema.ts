import { z } from 'zod';
import { compileJsonSchema } from './json-schema.js';

/**
 * The one schema for the config file. Defaults live here so that `Config` is always complete; the
 * README's configuration reference mirrors this file key by key.
 */
const upstreamName = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and single hyphens, e.g. "github"')
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
  })
  .strict()
  .prefault({});

/** What every upstream kind shares: sharing, pooling, timeouts, restarts and resilience. */
const upstreamCommon = {
  name: upstreamName,
  /** shared: one pool for everyone; per-tenant: one pool per tenant; per-session: one instance per client session. */
  sharing: z.enum(['shared', 'per-tenant', 'per-session']).default('shared'),
  pool,
  requestTimeoutMs: z.number().int().min(1).default(60_000),
  /** A result larger than this fails its call with SWB_RESULT_TOO_LARGE (the gateway never relays it). */
  maxResultBytes: z.number().int().min(1024).default(8 * 1024 * 1024),
  /** Progress resets the timeout, but a request never runs longer than this. */
  maxRequestTimeoutMs: z.number().int().min(1).default(600_000),
  initTimeoutMs: z.number().int().min(1).default(30_000),
  restart,
  /** Requests in flight per instance; more wait in a queue of at most `queue`, beyond which they fail at once. */
  concurrency: z
    .object({ max: z.number().int().min(1).default(256), queue: z.number().int().min(0).default(1024), queueTimeoutMs: z.number().int().min(1).default(30_000) })
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
    for (const key of ['readOnly', 'writable'] as const) {
      if (s[key].length > 0) ctx.addIssue({ code: 'custom', path: [key], message: 'needs type bubblewrap: the limits profile cannot confine the filesystem (use the pod securityContext)' });
    }
    if (s.network !== undefined) ctx.addIssue({ code: 'custom', path: ['network'], message: 'needs type bubblewrap: the limits profile cannot confine the network (use a NetworkPolicy)' });
  });

const sandbox = z.union([z.literal('none'), sandboxProfile]).prefault({});

const stdioUpstream = z
  .object({
    ...upstreamCommon,
    transport: z.literal('stdio'),
    sandbox,
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    cwd: z.string().optional(),
    /** Only these variables reach the child (plus PATH/HOME/LANG defaults); never the gateway's environment. */
    env: z.record(z.string(), z.string()).default({}),
    maxLineBytes: z.number().int().min(1024).default(16 * 1024 * 1024),
  })
  .strict();

/** The gateway's own identity towards a remote upstream: OAuth 2 client credentials. */
const clientCredentials = z
  .object({
    type: z.literal('client-credentials'),
    tokenUrl: z.url(),
    clientId: z.string().min(1),
    clientSecret: z.string().min(1),
    scope: z.string().optional(),
    audience: z.string().optional(),
    /** Refresh this long before the token expires. */
    refreshSkewMs: z.number().int().min(0).default(60_000),
  })
  .strict();

const remoteUpstream = {
  ...upstreamCommon,
  url: z.url(),
  /** Static headers sent with every request (use ${ENV} for credentials). Never the client's token. */
  headers: z.record(z.string(), z.string()).default({}),
  auth: clientCredentials.optional(),
  http: z
    .object({
      connectTimeoutMs: z.number().int().min(1).default(10_000),
      headersTimeoutMs: z.number().int().min(1).default(30_000),
      /** Idle limit on a JSON response body; SSE streams are exempt (they idle by design). */
      bodyTimeoutMs: z.number().int().min(1).default(60_000),
      maxConnections: z.number().int().min(1).default(64),
      keepAliveTimeoutMs: z.number().int().min(1).default(30_000),
      maxMessageBytes: z.number().int().min(1024).default(16 * 1024 * 1024),
    })
    .strict()
    .prefault({}),
};

const streamableHttpUpstream = z.object({ ...remoteUpstream, transport: z.literal('streamable-http') }).strict();
const sseUpstream = z.object({ ...remoteUpstream, transport: z.literal('sse') }).strict();

const upstream = z.discriminatedUnion('transport', [stdioUpstream, streamableHttpUpstream, sseUpstream]);

const endpoint = z
  .object({
    path: z.string().regex(/^\/[A-Za-z0-9._~\-/]*$/, 'an absolute URL path such as "/mcp"').refine((p) => p === '/' || !p.endsWith('/'), 'no trailing slash'),
    upstreams: z.array(upstreamName).min(1),
    /** auto: prefix names with "<upstream>__" only when the endpoint has more than one upstream. */
    prefix: z.enum(['auto', 'always', 'never']).default('auto'),
    /** Legacy HTTP+SSE stream path; default "/sse" for "/mcp", "<path>/sse" otherwise. */
    ssePath: z.string().regex(/^\/[A-Za-z0-9._~\-/]*$/).optional(),
    /** open: a down upstream is left out of lists; closed: it fails them. */
    failureMode: z.enum(['open', 'closed']).default('open'),
  })
  .strict();

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'HS256', 'HS384', 'HS512'] as const;

const auth = z
  .object({
    /** jwt: every request needs a valid bearer token. none: only allowed when bound to loopback. */
    mode: z.enum(['jwt', 'none']).default('none'),
    issuer: z.string().min(1).optional(),
    /** Accepted `aud` values; default: server.publicUrl and publicUrl + each endpoint path. */
    audience: z.array(z.string().min(1)).default([]),
    jwksUrl: z.url().optional(),
    /** Static verification keys: PEM (SPKI) or JWK / JWKS JSON files. */
    keys: z.array(z.string().min(1)).default([]),
    /** HMAC secret; honoured only with allowHmac, so an RS/HS confusion cannot arise by accident. */
    hmacSecret: z.string().min(32, 'at least 32 characters').optional(),
    allowHmac: z.boolean().default(false),
    algorithms: z.array(z.enum(ALGORITHMS)).min(1).default(['RS256', 'PS256', 'ES256', 'EdDSA']),
    clockToleranceSec: z.number().int().min(0).max(300).default(30),
    jwksCooldownMs: z.number().int().min(0).default(30_000),
    jwksCacheMaxAgeMs: z.number().int().min(0).default(600_000),
    jwksTimeoutMs: z.number().int().min(1).default(5_000),
    claims: z
      .object({ tenant: z.string().min(1).default('tenant'), scopes: z.string().min(1).default('scope') })
      .strict()
      .prefault({}),
    /** Published in the protected resource metadata (RFC 9728); default: [issuer]. */
    authorizationServers: z.array(z.string()).default([]),
    scopesSupported: z.array(z.string()).default([]),
  })
  .strict()
  .prefault({});

/** A pattern, or a pattern that also needs scopes in the caller's token. */
const rule = z.union([z.string().min(1), z.object({ match: z.string().min(1), scopes: z.array(z.string()).default([]) }).strict()]);
const ruleSet = z
  .object({ allow: z.array(rule).default(['*']), deny: z.array(z.string().min(1)).default([]) })
  .strict()
  .prefault({});

/** An absolute POSIX path without "." or ".." segments: what a path rule's prefix must be. */
const absolutePrefix = z
  .string()
  .regex(/^\/[^\0\\]*$/, 'an absolute POSIX path such as "/srv/data" (no NUL, no backslash)')
  .refine((p) => !p.split('/').some((seg) => seg === '.' || seg === '..'), 'no "." or ".." segments: write the prefix as the path it means');

/** Constraints on a tool's arguments, checked before the call is forwarded. */
const argumentRule = z
  .object({
    /** Cited in the error the client gets and in the audit line (rule "arguments:<name>"). */
    name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, '1-64 of [A-Za-z0-9._-]'),
    /** Globs over the tool names the client sees (prefixed, e.g. "fs__*"). */
    tools: z.array(z.string().min(1)).min(1),
    /** Each named argument, when present, must be an absolute path under one of `under`; "name[]" for an array of paths. */
    paths: z
      .object({
        arguments: z.array(z.string().regex(/^[^[\]]+(?:\[\])?$/, 'an argument name, or "name[]" for an array of paths')).min(1),
        under: z.array(absolutePrefix).min(1),
      })
      .strict()
      .optional(),
    /** A JSON Schema (draft 2020-12) the arguments object must also satisfy. */
    schema: z.union([z.boolean(), z.record(z.string(), z.unknown())], { error: 'a JSON Schema: an object, or true / false' }).optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (!r.paths && r.schema === undefined) ctx.addIssue({ code: 'custom', path: [], message: 'needs "paths", "schema" or both' });
    if (r.schema === undefined) return;
    try {
      compileJsonSchema(r.schema);
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['schema'], message: `not a usable JSON Schema (draft 2020-12): ${(err as Error).message}` });
    }
  });

const tenant = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, '1-64 of [A-Za-z0-9._-]'),
    /** Endpoint paths this tenant may use ("*" for all). */
    endpoints: z.array(z.string()).min(1),
    tools: ruleSet,
    resources: ruleSet,
    prompts: ruleSet,
    limits: z
      .object({
        requestsPerSecond: z.number().positive().optional(),
        burst: z.number().int().positive().optional(),
        concurrentRequests: z.number().int().positive().optional(),
        sessions: z.number().int().positive().optional(),
      })
      .strict()
      .prefault({}),
    /** Argument rules for tools/call; every rule whose tools match the called name must pass. */
    arguments: z
      .array(argumentRule)
      .default([])
      .superRefine((rules, ctx) => {
        const seen = new Set<string>();
        rules.forEach((r, i) => {
          if (seen.has(r.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate argument rule "${r.name}"` });
          seen.add(r.name);
        });
      }),
  })
  .strict();

export const configSchema = z
  .object({
    server: z
      .object({
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        /** Origins allowed to call the gateway from a browser; requests with any other Origin get 403. */
        allowedOrigins: z.array(z.string()).default([]),
        /** Host header values accepted; empty means loopback names when bound to loopback, anything otherwise. */
        allowedHosts: z.array(z.string()).default([]),
        maxBodyBytes: z.number().int().min(1024).default(4 * 1024 * 1024),
        /** How a POST carrying requests is answered: an SSE stream, or one JSON body. */
        responseMode: z.enum(['sse', 'json']).default('sse'),
        keepAliveMs: z.number().int().min(1000).default(15_000),
        /** Bytes a slow SSE reader may have queued before its connection is dropped (it can resume). */
        maxStreamBufferBytes: z.number().int().min(65536).default(8 * 1024 * 1024),
        /** The gateway's canonical URL as clients see it (token audience, OAuth metadata); default http://host:port. */
        publicUrl: z.url().optional(),
        /** On SIGTERM: how long requests in flight may take to finish before they are answered with an error. */
        shutdownGraceMs: z.number().int().min(0).default(25_000),
      })
      .strict()
      .prefault({}),
    session: z
      .object({
        idleTimeoutMs: z.number().int().min(1000).default(30 * 60_000),
        maxSessions: z.number().int().min(1).default(100_000),
        /** How long a request the gateway relays to the client (sampling, elicitation, roots) may wait for its answer. */
        clientRequestTimeoutMs: z.number().int().min(1000).default(300_000),
        /** Events kept per SSE stream for Last-Event-ID resumption. */
        eventsPerStream: z.number().int().min(0).default(1000),
        /** Bytes of events kept per session for resumption (memory store); the oldest go first. */
        eventBytesPerSession: z.number().int().min(65536).default(8 * 1024 * 1024),
      })
      .strict()
      .prefault({}),
    /** Where session state lives. Absent: memory (one replica). With redis (or REDIS_URL): shared by replicas. */
    store: z
      .object({
        redis: z
          .object({
            url: z.string().regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL'),
            keyPrefix: z.string().default('swb:'),
            /** A session record lives this long after its last activity. */
            sessionTtlMs: z.number().int().min(1000).default(3_600_000),
            /** How often a replica proves it is alive, and how long that proof lasts. */
            heartbeatMs: z.number().int().min(100).default(1_000),
            replicaTtlMs: z.number().int().min(300).default(5_000),
            /** How long a forwarded request may wait for the owner replica to start answering. */
            forwardTimeoutMs: z.number().int().min(100).default(10_000),
          })
          .strict()
          .optional(),
      })
      .strict()
      .prefault({}),
    metrics: z
      .object({
        enabled: z.boolean().default(true),
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(9464),
        path: z.string().regex(/^\//).default('/metrics'),
      })
      .strict()
      .prefault({}),
    logging: z
      .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
      .strict()
      .prefault({}),
    auth,
    /** Who may use what. With auth mode none, every request is tenant "anonymous" and uses these rules if one is named so. */
    tenants: z.array(tenant).default([]),
    audit: z
      .object({
        enabled: z.boolean().default(true),
        /** Log a SHA-256 of each call's arguments (never the arguments themselves). */
        hashArguments: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    /** Tool-definition pinning: a changed tool is withheld (or passed with a warning) until an operator approves it. */
    pinning: z
      .object({
        mode: z.enum(['withhold', 'warn', 'off']).default('withhold'),
        /** Where pins persist without Redis (JSON); `switchboard pins approve` writes here. Relative to the config file. */
        file: z.string().min(1).optional(),
        /** Pins fixed in config, authoritative over the store: upstream → tool (its own name) → SHA-256 hex. */
        pins: z
          .record(z.string(), z.record(z.string().min(1), z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 as 64 lowercase hex digits, as "switchboard pins list" prints it')))
          .default({}),
      })
      .strict()
      .prefault({}),
    upstreams: z.array(upstream).min(1),
    endpoints: z.array(endpoint).min(1),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const names = new Set<string>();
    cfg.upstreams.forEach((u, i) => {
      if (names.has(u.name)) ctx.addIssue({ code: 'custom', path: ['upstreams', i, 'name'], message: `duplicate upstream name "${u.name}"` });
      names.add(u.name);
      if (u.sharing === 'per-session' && u.pool.warm > u.pool.max) {
        ctx.addIssue({ code: 'custom', path: ['upstreams', i, 'pool', 'warm'], message: 'must not exceed pool.max' });
      }
      if (u.pool.perTenantMax !== undefined && u.pool.perTenantMax > u.pool.max) {
        ctx.addIssue({ code: 'custom', path: ['upstreams', i, 'pool', 'perTenantMax'], message: 'must not exceed pool.max' });
      }
    });
    for (const u of Object.keys(cfg.pinning.pins)) {
      if (!names.has(u)) ctx.addIssue({ code: 'custom', path: ['pinning', 'pins', u], message: `unknown upstream "${u}"` });
    }
    const h = cfg.server.host;
    const loopback = h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(h);
    if (cfg.auth.mode === 'none' && !loopback) {
      ctx.addIssue({ code: 'custom', path: ['auth', 'mode'], message: `"none" is only accepted when server.host is a loopback address (it is "${h}"); configure jwt` });
    }
    if (cfg.auth.mode === 'jwt') {
      if (!cfg.auth.issuer) ctx.addIssue({ code: 'custom', path: ['auth', 'issuer'], message: 'required when auth.mode is jwt' });
      if (!cfg.auth.jwksUrl && cfg.auth.keys.length === 0 && !(cfg.auth.allowHmac && cfg.auth.hmacSecret)) {
        ctx.addIssue({ code: 'custom', path: ['auth'], message: 'jwt needs keys: set jwksUrl, keys, or hmacSecret with allowHmac' });
      }
      if (cfg.auth.algorithms.some((a) => a.startsWith('HS')) && !cfg.auth.allowHmac) {
        ctx.addIssue({ code: 'custom', path: ['auth', 'algorithms'], message: 'HS* algorithms need allowHmac: true' });
      }
      if (cfg.tenants.length === 0) ctx.addIssue({ code: 'custom', path: ['tenants'], message: 'with auth.mode jwt at least one tenant must be granted something (deny by default)' });
    }
    const tenantNames = new Set<string>();
    cfg.tenants.forEach((t, i) => {
      if (tenantNames.has(t.name)) ctx.addIssue({ code: 'custom', path: ['tenants', i, 'name'], message: `duplicate tenant "${t.name}"` });
      tenantNames.add(t.name);
      t.endpoints.forEach((p, j) => {
        if (p !== '*' && !cfg.endpoints.some((e) => e.path === p)) ctx.addIssue({ code: 'custom', path: ['tenants', i, 'endpoints', j], message: `no endpoint has path "${p}"` });
      });
    });
    const paths = new Set<string>();
    cfg.endpoints.forEach((e, i) => {
      for (const p of [e.path, ssePathOf(e), messagesPathOf(e)]) {
        if (paths.has(p)) ctx.addIssue({ code: 'custom', path: ['endpoints', i, 'path'], message: `path "${p}" is used twice` });
        paths.add(p);
      }
      e.upstreams.forEach((u, j) => {
        if (!names.has(u)) ctx.addIssue({ code: 'custom', path: ['endpoints', i, 'upstreams', j], message: `unknown upstream "${u}"` });
      });
      if (new Set(e.upstreams).size !== e.upstreams.length) ctx.addIssue({ code: 'custom', path: ['endpoints', i, 'upstreams'], message: 'lists an upstream twice' });
      if (e.prefix === 'never' && e.upstreams.length > 1) {
        ctx.addIssue({ code: 'custom', path: ['endpoints', i, 'prefix'], message: '"never" needs exactly one upstream: names from several upstreams could collide' });
      }
    });
  });

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;
export type UpstreamConfig = Config['upstreams'][number];
export type StdioUpstreamConfig = Extract<UpstreamConfig, { transport: 'stdio' }>;
export type SandboxConfig = StdioUpstreamConfig['sandbox'];
export type SandboxProfileConfig = Exclude<SandboxConfig, 'none'>;
export type RemoteUpstreamConfig = Extract<UpstreamConfig, { transport: 'streamable-http' | 'sse' }>;
export type EndpointConfig = Config['endpoints'][number];
export type AuthConfig = Config['auth'];
export type RedisConfig = NonNullable<Config['store']['redis']>;
export type PinningConfig = Config['pinning'];
export type TenantConfig = Config['tenants'][number];
export type RuleSetConfig = TenantConfig['tools'];
export type ArgumentRuleConfig = TenantConfig['arguments'][number];

export function ssePathOf(e: { path: string; ssePath?: string | undefined }): string {
  return e.ssePath ?? (e.path === '/mcp' ? '/sse' : `${e.path === '/' ? '' : e.path}/sse`);
}

/** The legacy transport's POST endpoint, beside its stream: "/sse" → "/messages", "/x/sse" → "/x/messages". */
export function messagesPathOf(e: { path: string; ssePath?: string | undefined }): string {
  const sse = ssePathOf(e);
  return `${sse.slice(0, sse.lastIndexOf('/'))}/messages`;
}
