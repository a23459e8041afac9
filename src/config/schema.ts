import { z } from 'zod';
import { httpUrl } from './http-url.js';
import { adminProblems, adminSchema } from './admin-schema.js';
import { authSchema } from './auth-schema.js';
import { browserOrigin, hostHeaderName } from './browser-origin.js';
import { durationProblems } from './durations.js';
import { guardrailsSchema, reviewPatternProblems } from './guardrails-schema.js';
import { listenerProblems } from './listener-clash.js';
import { isLoopbackHost } from './loopback.js';
import { metricsSchema } from './metrics-schema.js';
import { tenant } from './tenant-schema.js';
import { toolsProblems, toolsSchema } from './tools-schema.js';
import { tracingSchema } from './tracing-schema.js';
import { upstream, upstreamName } from './upstream-schema.js';
import { consentProblems, vaultSchema } from './vault-schema.js';

/**
 * The one schema for the config file, put together from its parts (upstream-schema.ts, tenant-schema.ts
 * and the server-side sections below). Defaults live in the schema so that `Config` is always complete;
 * the README's configuration reference mirrors these files key by key.
 */

/**
 * A path clients can ask for as written: a URL parser resolves "." and ".." segments away (/team/../mcp is
 * requested as /mcp) and reads a leading "//" as a host (the legacy endpoint event's //x/messages), so an
 * endpoint there was accepted and never reached. A trailing "/" is the caller's concern.
 */
const urlPath = z
  .string()
  .regex(/^\/[A-Za-z0-9._~\-/]*$/, 'an absolute URL path such as "/mcp"')
  .refine((p) => !p.slice(1).split('/').some((seg, i, all) => seg === '.' || seg === '..' || (seg === '' && i < all.length - 1)), 'no "." or ".." segment and no "//": clients resolve them away and never ask for the path as written');

const endpoint = z
  .object({
    path: urlPath.refine((p) => p === '/' || !p.endsWith('/'), 'no trailing slash'),
    upstreams: z.array(upstreamName).min(1),
    /** auto: prefix names with "<upstream>__" only when the endpoint has more than one upstream. */
    prefix: z.enum(['auto', 'always', 'never']).default('auto'),
    /** Legacy HTTP+SSE stream path; default "/sse" for "/mcp", "<path>/sse" otherwise. */
    ssePath: urlPath.optional(),
    /**
     * Scopes every token must carry on this endpoint (its paths and its legacy ones): a token without them
     * gets 403 insufficient_scope, and a 401's challenge names them (RFC 6750 §3 scope-tokens, so they
     * can be quoted in WWW-Authenticate as they are).
     */
    scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'a scope token (RFC 6749 §3.3: printable ASCII, no space, " or \\)')).default([]),
    /** open: a down upstream is left out of lists; closed: it fails them. */
    failureMode: z.enum(['open', 'closed']).default('open'),
    /**
     * The protocol eras served: legacy (initialize and a session, 2024-11-05 … 2025-11-25) and modern
     * (2026-07-28, stateless). A legacy-only endpoint answers modern requests as a legacy server would,
     * a modern-only one 2025 requests as a 2026-07-28-only server would (edge/legacy-refusal.ts).
     */
    eras: z
      .array(z.enum(['legacy', 'modern']))
      .min(1)
      .refine((e) => new Set(e).size === e.length, 'lists an era twice')
      .default(['legacy', 'modern']),
    /** ttlMs on modern cacheable results (tools/list, resources/read, server/discover, …): 0 = refetch each time. */
    cacheTtlMs: z.number().int().min(0).max(86_400_000).default(0),
    /** Exposure (all, or search meta-tools), curation and name length of its tools (tools-schema.ts). */
    tools: toolsSchema,
    /** Hidden-text scanning of definitions and results (guardrails-schema.ts); tenants may override it. */
    guardrails: guardrailsSchema,
  })
  .strict();

/** 32 bytes as 64 hex digits or 43/44 base64(url) characters, or a passphrase (src/modern/request-state-keys.ts). The value is never echoed. */
const requestStateKey = z.string().min(32, 'at least 32 characters: 32 random bytes as hex or base64 (openssl rand -base64 32), or a long passphrase');

/** Paths the gateway serves itself, beside its endpoints: what they are, or undefined for a free path. */
function gatewayOwn(p: string): string | undefined {
  if (p === '/healthz' || p === '/readyz') return 'a health probe';
  if (p === '/.well-known' || p.startsWith('/.well-known/')) return 'OAuth metadata';
  if (p === '/oauth' || p.startsWith('/oauth/')) return 'user consent';
  return undefined;
}

/**
 * Every endpoint takes three paths (its own, the legacy SSE stream and the legacy messages POST); none
 * may be taken twice. One problem per clashing endpoint: two endpoints on "/mcp" clash on all three,
 * and the first clash says it all.
 */
function checkEndpointPaths(endpoints: ReadonlyArray<{ path: string; ssePath?: string | undefined }>, ctx: z.RefinementCtx): void {
  const owners = new Map<string, string>();
  endpoints.forEach((e, i) => {
    const key = e.ssePath === undefined ? 'path' : 'ssePath';
    for (const [p, k] of [[e.path, 'path'], [ssePathOf(e), key], [messagesPathOf(e), key]] as const) {
      const why = gatewayOwn(p);
      if (why) ctx.addIssue({ code: 'custom', path: ['endpoints', i, k], message: `"${p}" is the gateway's own (${why}): choose another path` });
    }
    const own = [
      { path: e.path, key: 'path', kind: 'path' },
      { path: ssePathOf(e), key, kind: 'legacy SSE stream path' },
      { path: messagesPathOf(e), key, kind: 'legacy messages path' },
    ];
    const clash = own.find((p) => owners.has(p.path));
    if (clash) {
      const its = clash.path === e.path ? '' : `its ${clash.kind} `;
      ctx.addIssue({ code: 'custom', path: ['endpoints', i, clash.key], message: `${its}"${clash.path}" is already ${owners.get(clash.path)}` });
    }
    for (const p of own) if (!owners.has(p.path)) owners.set(p.path, p.kind === 'path' ? `the path of endpoints[${i}]` : `endpoints[${i}]'s ${p.kind}`);
  });
}

/** A pattern, or a pattern that also needs scopes in the caller's token. */
export const configSchema = z
  .object({
    server: z
      .object({
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        /** Origins allowed to call the gateway from a browser; requests with any other Origin get 403. */
        allowedOrigins: z.array(browserOrigin).default([]),
        /** Host header values accepted; empty means loopback names when bound to loopback, anything otherwise. */
        allowedHosts: z.array(hostHeaderName).default([]),
        maxBodyBytes: z.number().int().min(1024).default(4 * 1024 * 1024),
        /**
         * How a POST carrying requests is answered: an SSE stream, one JSON body, or auto: JSON when every
         * answer is in within responseHoldMs and nothing else needed streaming, an SSE stream otherwise.
         */
        responseMode: z.enum(['auto', 'sse', 'json']).default('auto'),
        /** Auto mode: how long an answer is held as JSON before it becomes a stream (headers, priming event). */
        responseHoldMs: z.number().int().min(1).max(10_000).default(50),
        keepAliveMs: z.number().int().min(1000).default(15_000),
        /** Bytes a slow SSE reader may have queued before its connection is dropped (it can resume). */
        maxStreamBufferBytes: z.number().int().min(65536).default(8 * 1024 * 1024),
        /** The gateway's canonical URL as clients see it (token audience, OAuth metadata); default http://host:port. */
        publicUrl: httpUrl('server.publicUrl (what clients connect to)').optional(),
        /** On SIGTERM: how long requests in flight may take to finish before they are answered with an error. */
        shutdownGraceMs: z.number().int().min(0).default(25_000),
        /** A new connection must send complete request headers within this long (slow or silent clients are cut). */
        headersTimeoutMs: z.number().int().min(100).default(10_000),
        /** Deadline for receiving a whole request, headers and body; the response (an SSE stream) is not limited. */
        bodyTimeoutMs: z.number().int().min(100).default(30_000),
        /** Client messages nesting arrays and objects deeper than this are refused with -32600. */
        maxJsonDepth: z.number().int().min(8).max(1000).default(64),
        /**
         * Messages one 2025-03-26 batch may hold; a longer one is refused with -32600 before any of it is
         * handled (every message costs a request's work on the event loop: 90,000 pings held it for seconds).
         */
        maxBatchMessages: z.number().int().min(1).max(100_000).default(100),
        /** A request body with no bytes arriving for this long is cut. */
        bodyIdleTimeoutMs: z.number().int().min(100).default(5_000),
        /** Open connections at most; further ones are closed at once. Default: from the descriptor limit (RLIMIT_NOFILE). */
        maxConnections: z.number().int().min(2).optional(),
        /** Connections that have not yet sent an authenticated request; the oldest idle one is closed beyond this. Default: maxConnections / 2. */
        maxUnauthenticatedConnections: z.number().int().min(1).optional(),
      })
      .strict()
      .refine((s) => s.headersTimeoutMs <= s.bodyTimeoutMs, { message: 'headersTimeoutMs must not exceed bodyTimeoutMs', path: ['headersTimeoutMs'] })
      .refine((s) => s.maxConnections === undefined || s.maxUnauthenticatedConnections === undefined || s.maxUnauthenticatedConnections < s.maxConnections, {
        message: 'maxUnauthenticatedConnections must be below maxConnections',
        path: ['maxUnauthenticatedConnections'],
      })
      .prefault({}),
    session: z
      .object({
        idleTimeoutMs: z.number().int().min(1000).default(30 * 60_000),
        maxSessions: z.number().int().min(1).default(100_000),
        /** How long a request the gateway relays to the client (sampling, elicitation, roots) may wait for its answer. */
        clientRequestTimeoutMs: z.number().int().min(1000).default(300_000),
        /**
         * How long a request that arrives after the initialize response but before notifications/initialized
         * is held for the notification (on HTTP the two travel on different connections and can overtake
         * each other); then it is refused with -32600. Absent: 2000 ms.
         */
        initializedWaitMs: z.number().int().min(0).max(60_000).optional(),
        /** Events kept per SSE stream for Last-Event-ID resumption. */
        eventsPerStream: z.number().int().min(0).default(1000),
        /** Bytes of events kept per session for resumption (memory and Redis store); the oldest go first. */
        eventBytesPerSession: z.number().int().min(65536).default(8 * 1024 * 1024),
        /**
         * How long (at least; at most twice it) a POST stream whose answer went to a connected reader stays
         * resumable, its answer kept in memory: written is not received. 0: let go as it is written. Such
         * answers are kept up to eventBytesPerSession bytes a session (their own budget), the oldest let go first.
         */
        answerGraceMs: z.number().int().min(0).max(300_000).default(10_000),
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
            /**
             * The URL other replicas forward this replica's sessions to (HTTP, replica to replica). Absent:
             * http://<POD_IP, else server.host when concrete, else the first non-internal IPv4>:<bound port>.
             */
            advertiseUrl: httpUrl('forwarding between replicas').optional(),
            /**
             * The shared secret that signs forwards between replicas (write it as ${ENV}). Absent: a random
             * one created once in Redis and read by every replica (whoever can read Redis is trusted anyway).
             */
            forwardSecret: z.string().min(32, 'at least 32 characters').optional(),
          })
          .strict()
          // A proof that outlasts no more than the gap to the next beat lapses at every late one: the
          // replica looks dead meanwhile, and others take over the sessions it is serving. Half a beat of
          // slack (a GC pause, a slow answer): what it refuses could not work, and nothing that did.
          .refine((r) => r.replicaTtlMs >= 1.5 * r.heartbeatMs, { message: 'must be at least 1.5 × heartbeatMs (raise it with heartbeatMs): a heartbeat that lapses before the next beat makes this replica look dead, and other replicas take its sessions over', path: ['replicaTtlMs'] })
          .optional(),
      })
      .strict()
      .prefault({}),
    /** The Prometheus listener (metrics-schema.ts). */
    metrics: metricsSchema,
    /** The admin API and reloads (admin-schema.ts). */
    admin: adminSchema,
    logging: z
      .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
      .strict()
      .prefault({}),
    /** OpenTelemetry traces, off by default (tracing-schema.ts). */
    tracing: tracingSchema,
    auth: authSchema,
    /** Who may use what. With auth mode none, every request is tenant "anonymous" and uses these rules if one is named so. */
    tenants: z.array(tenant).default([]),
    audit: z
      .object({
        enabled: z.boolean().default(true),
        /** Log a SHA-256 of each call's arguments (never the arguments themselves). */
        hashArguments: z.boolean().default(false),
        /** With hashArguments: the hash is an HMAC-SHA256 under this key (argumentsHmacSha256), the same on every replica. */
        hashKey: z.string().min(32, 'at least 32 characters: openssl rand -base64 32').optional(),
      })
      .strict()
      .prefault({}),
    /** The 2026-07-28 (stateless) era: what the gateway keeps for modern clients in front of 2025 upstreams. */
    modern: z
      .object({
        /** Seals the requestState of input_required rounds; every replica needs the same. Absent: a random key per process. */
        requestStateKey: requestStateKey.optional(),
        /** Keys that still open (never seal) requestState: the previous requestStateKey, for one TTL after a rotation. */
        requestStatePreviousKeys: z.array(requestStateKey).default([]),
        /** How long an input_required round waits for the client's retry; then its requestState expires and the held upstream call is cancelled. */
        continuationTtlMs: z.number().int().min(1000).default(300_000),
        /**
         * Rounds one principal may leave waiting for a retry on a replica (each holds an upstream call open):
         * one more gives up its oldest, cancelled upstream. A client need never retry a round.
         */
        continuationsPerPrincipal: z.number().int().min(1).default(16),
        /**
         * Resource URIs one subscriptions/listen may subscribe to (each a resources/subscribe upstream); the
         * rest of its resourceSubscriptions are not honoured (left out of its acknowledgement).
         */
        listenUrisMax: z.number().int().min(1).max(10_000).default(100),
        /**
         * subscriptions/listen streams one principal may hold open on an endpoint of a replica; one more
         * ends its oldest (each holds a connection, upstream subscriptions and a listener on every notification).
         */
        listensPerPrincipal: z.number().int().min(1).max(100_000).default(64),
      })
      .strict()
      .refine((m) => m.requestStatePreviousKeys.length === 0 || m.requestStateKey !== undefined, {
        message: 'previous keys only open state sealed before a rotation: set requestStateKey too',
        path: ['requestStatePreviousKeys'],
      })
      .prefault({}),
    /** The sealed vault of per-user upstream tokens (vault-schema.ts). */
    vault: vaultSchema,
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
    for (const p of consentProblems(cfg)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
    for (const u of Object.keys(cfg.pinning.pins)) {
      if (!names.has(u)) ctx.addIssue({ code: 'custom', path: ['pinning', 'pins', u], message: `unknown upstream "${u}"` });
    }
    const h = cfg.server.host;
    if (cfg.auth.mode === 'none' && !isLoopbackHost(h)) {
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
    checkEndpointPaths(cfg.endpoints, ctx);
    for (const p of adminProblems(cfg)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
    for (const p of listenerProblems(cfg)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
    for (const p of reviewPatternProblems(cfg)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
    for (const p of durationProblems(cfg)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
    cfg.endpoints.forEach((e, i) => {
      e.upstreams.forEach((u, j) => {
        if (!names.has(u)) ctx.addIssue({ code: 'custom', path: ['endpoints', i, 'upstreams', j], message: `unknown upstream "${u}"` });
      });
      if (new Set(e.upstreams).size !== e.upstreams.length) ctx.addIssue({ code: 'custom', path: ['endpoints', i, 'upstreams'], message: 'lists an upstream twice' });
      if (e.prefix === 'never' && e.upstreams.length > 1) {
        ctx.addIssue({ code: 'custom', path: ['endpoints', i, 'prefix'], message: '"never" needs exactly one upstream: names from several upstreams could collide' });
      }
    });
  })
  .superRefine((cfg, ctx) => {
    // With auth off, requests are tenant "anonymous" even when no tenant is configured.
    const tenants = new Set([...cfg.tenants.map((t) => t.name), ...(cfg.auth.mode === 'none' ? ['anonymous'] : [])]);
    cfg.endpoints.forEach((e, i) => {
      const prefixes = e.prefix === 'always' || (e.prefix === 'auto' && e.upstreams.length > 1);
      for (const p of toolsProblems(e.tools, e.upstreams, prefixes, tenants)) ctx.addIssue({ code: 'custom', path: ['endpoints', i, 'tools', ...p.path], message: p.message });
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
export type { AdminConfig } from './admin-schema.js';
export type PinningConfig = Config['pinning'];
export type ModernConfig = Config['modern'];
export type TracingConfig = Config['tracing'];
export type VaultConfig = Config['vault'];
export type TenantConfig = Config['tenants'][number];
export type RuleSetConfig = TenantConfig['tools'];
export type ArgumentRuleConfig = TenantConfig['arguments'][number];
export type ConfirmRuleConfig = TenantConfig['confirm'][number];

export function ssePathOf(e: { path: string; ssePath?: string | undefined }): string {
  return e.ssePath ?? (e.path === '/mcp' ? '/sse' : `${e.path === '/' ? '' : e.path}/sse`);
}

/** The legacy transport's POST endpoint, beside its stream: "/sse" → "/messages", "/x/sse" → "/x/messages". */
export function messagesPathOf(e: { path: string; ssePath?: string | undefined }): string {
  const sse = ssePathOf(e);
  return `${sse.slice(0, sse.lastIndexOf('/'))}/messages`;
}
