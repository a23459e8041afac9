import { z } from 'zod';
import { oauthClientChecks, oauthClientFields } from './oauth-client-schema.js';

// The sealed vault of per-user upstream tokens (auth type user-oauth), a part of the config schema.

const BASE64_32 = /^(?:[A-Za-z0-9+/]{43}=|[A-Za-z0-9_-]{43})$/;
const HEX_32 = /^[0-9a-fA-F]{64}$/;

/** Exactly 32 random bytes: a vault key is never a passphrase (a guessable phrase would open every token). */
const vaultKey = z.string().refine((s) => BASE64_32.test(s) || HEX_32.test(s), '32 random bytes as base64 or hex (openssl rand -base64 32)');

/**
 * The gateway's own identity provider, for checking who completes a consent link: the browser signs in
 * there (authorization code + PKCE) and the token it gets must authenticate, with the gateway's own auth,
 * as the principal the link was made for.
 */
const verifyUserSchema = oauthClientChecks(
  z
    .object({
      ...oauthClientFields,
      /** RFC 8707 resource indicator, so the token is issued for the gateway (the audience auth.jwt expects). */
      resource: oauthClientFields.resource,
    })
    .strict(),
).refine((a) => a.authorizationServer !== undefined || a.authorizationEndpoint !== undefined, {
  message: "set authorizationServer (the gateway's identity provider), or authorizationEndpoint and tokenEndpoint",
  path: ['authorizationServer'],
});

export type VerifyUserConfig = z.infer<typeof verifyUserSchema>;

export const vaultSchema = z
  .object({
    /** Seals every stored token (AES-256-GCM). Write it as ${SWITCHBOARD_VAULT_KEY}; every replica needs the same. */
    key: vaultKey.optional(),
    /** Keys that still open (never seal) tokens sealed before a rotation; a token opened with one is sealed again with `key`. */
    previousKeys: z.array(vaultKey).default([]),
    /** How long a consent link (/oauth/start?flow=…) and the authorization that follows may take. */
    flowTtlMs: z.number().int().min(10_000).max(3_600_000).default(600_000),
    /** Opt-in: who completes a consent link must first sign in at the gateway's identity provider as the link's principal. */
    verifyUser: verifyUserSchema.optional(),
  })
  .strict()
  .refine((v) => v.previousKeys.length === 0 || v.key !== undefined, { message: 'previous keys only open tokens sealed before a rotation: set key too', path: ['previousKeys'] })
  .prefault({});

/** The 32 bytes of a configured vault key. */
export function vaultKeyBytes(s: string): Buffer {
  return HEX_32.test(s) ? Buffer.from(s, 'hex') : Buffer.from(s, s.includes('-') || s.includes('_') ? 'base64url' : 'base64');
}

interface ConsentConfig {
  server: { publicUrl?: string | undefined };
  auth: { mode: string };
  vault: { key?: string | undefined };
  upstreams: ReadonlyArray<{ transport: string; auth?: { type: string } | undefined }>;
}

/** What user-oauth needs beyond its own keys: a vault key, a public URL for browsers, and authenticated users. */
export function consentProblems(cfg: ConsentConfig): Array<{ path: (string | number)[]; message: string }> {
  const out: Array<{ path: (string | number)[]; message: string }> = [];
  cfg.upstreams.forEach((u, i) => {
    if (u.auth?.type !== 'user-oauth') return;
    const path = ['upstreams', i, 'auth'];
    if (cfg.vault.key === undefined) out.push({ path, message: "user-oauth stores each user's tokens sealed: set vault.key (or SWITCHBOARD_VAULT_KEY) to 32 random bytes (openssl rand -base64 32)" });
    if (cfg.server.publicUrl === undefined) out.push({ path, message: "user-oauth sends users' browsers to /oauth/start and the authorization server back to /oauth/callback: set server.publicUrl to the URL browsers reach the gateway at" });
    if (cfg.auth.mode !== 'jwt') out.push({ path, message: 'user-oauth links tokens to authenticated users: it needs auth.mode jwt' });
  });
  return out;
}
