import { z } from 'zod';
import { isLoopbackHost } from './loopback.js';

/**
 * The admin section: the operator's API on a listener of its own (like metrics), and how reloads
 * happen. Off by default; loopback by default when on.
 */
/** The shortest static token: nothing limits how often a caller of the admin API guesses. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

export const adminSchema = z
  .object({
    enabled: z.boolean().default(false),
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(9465),
    /** A static bearer token (write it as ${ENV} or use tokenFile: never commit it). */
    // Trimmed before its length is checked: no header carries the newline a Secret written with `echo` leaves.
    token: z.string().trim().min(ADMIN_TOKEN_MIN_LENGTH, `at least ${ADMIN_TOKEN_MIN_LENGTH} characters (openssl rand -base64 32)`).optional(),
    /** A file holding the token (a mounted secret); relative to the config file. Re-read on reload. */
    tokenFile: z.string().min(1).optional(),
    /** A JWT from auth.issuer carrying this scope is also accepted (auth.mode jwt). */
    scope: z.string().min(1).default('switchboard:admin'),
    /** Reload when the config file changes (a Kubernetes ConfigMap update), besides SIGHUP and POST /reload. */
    watchConfig: z.boolean().default(false),
    /** On reload, how long calls in flight on a removed or replaced upstream may take before it is stopped. */
    drainGraceMs: z.number().int().min(0).max(600_000).default(30_000),
    /**
     * Open connections to the admin listener at most; more are closed at accept. Its callers are a few
     * operators, consoles (16 streams at most) and scripts; without a cap, anyone reaching the port could
     * hold connections until the process ran out of descriptors, which the MCP listener shares.
     */
    maxConnections: z.number().int().min(1).default(64),
  })
  .strict()
  .refine((a) => a.token === undefined || a.tokenFile === undefined, { message: 'set token or tokenFile, not both', path: ['tokenFile'] })
  .prefault({});

export type AdminConfig = z.output<typeof adminSchema>;

/** Whether the admin API has a way to authenticate a caller: a static token, or JWTs with the admin scope. */
export function adminHasAuth(admin: AdminConfig, authMode: 'jwt' | 'none'): boolean {
  return admin.token !== undefined || admin.tokenFile !== undefined || authMode === 'jwt';
}

/** The rule across sections: an admin listener off loopback must authenticate its callers. */
export function adminProblems(cfg: { admin: AdminConfig; auth: { mode: 'jwt' | 'none' } }): Array<{ path: string[]; message: string }> {
  const a = cfg.admin;
  if (!a.enabled || isLoopbackHost(a.host) || adminHasAuth(a, cfg.auth.mode)) return [];
  return [{ path: ['admin', 'host'], message: `the admin API on a non-loopback address ("${a.host}") needs authentication: set admin.token or admin.tokenFile, or use auth.mode jwt (tokens with scope admin.scope)` }];
}
