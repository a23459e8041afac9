import { z } from 'zod';
import { httpUrl } from './http-url.js';

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'HS256', 'HS384', 'HS512'] as const;

/** The auth section: how every request's bearer token is checked (src/auth/). */
export const authSchema = z
  .object({
    /** jwt: every request needs a valid bearer token. none: only allowed when bound to loopback. */
    mode: z.enum(['jwt', 'none']).default('none'),
    issuer: z.string().min(1).optional(),
    /** Accepted `aud` values; default: server.publicUrl and publicUrl + each endpoint path. One naming an endpoint's URL is accepted on that endpoint only (edge-auth.ts). */
    audience: z.array(z.string().min(1)).default([]),
    jwksUrl: httpUrl('auth.jwksUrl (the key set is fetched)').optional(),
    /** Static verification keys: PEM (SPKI) or JWK / JWKS JSON files. */
    keys: z.array(z.string().min(1)).default([]),
    /** HMAC secret; honoured only with allowHmac, so an RS/HS confusion cannot arise by accident. */
    hmacSecret: z.string().min(32, 'at least 32 characters').optional(),
    allowHmac: z.boolean().default(false),
    algorithms: z.array(z.enum(ALGORITHMS)).min(1).default(['RS256', 'PS256', 'ES256', 'EdDSA']),
    clockToleranceSec: z.number().int().min(0).max(300).default(30),
    /**
     * Accepted `typ` header values (RFC 7515 §4.1.9: case-insensitive, "application/" optional). RFC 9068 §4
     * wants at+jwt only; JWT and untyped tokens are what most issuers sign, so they pass by default, while
     * other JWTs of the same issuer (logout+jwt, secevent+jwt, …) never pass as access tokens.
     */
    tokenTypes: z.array(z.string().min(1)).min(1).default(['at+jwt', 'JWT']),
    allowUntypedTokens: z.boolean().default(true),
    jwksCooldownMs: z.number().int().min(0).default(30_000),
    jwksCacheMaxAgeMs: z.number().int().min(0).default(600_000),
    jwksTimeoutMs: z.number().int().min(1).default(5_000),
    /**
     * While refetching the key set fails, the keys last fetched stay in use this long past
     * jwksCacheMaxAgeMs (a blip or an outage at the issuer is not one here); 0: never past it.
     */
    jwksStaleIfErrorMs: z.number().int().min(0).default(3_600_000),
    /**
     * Tokens already verified are kept by their exact text (a signature check costs more CPU than the
     * rest of a call): used until the token's exp, and at most maxAgeMs after its check. maxEntries 0: none kept.
     */
    tokenCache: z
      .object({ maxEntries: z.number().int().min(0).max(1_000_000).default(10_000), maxAgeMs: z.number().int().min(0).max(600_000).default(60_000) })
      .strict()
      .prefault({}),
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
