import { z } from 'zod';
import { httpUrl } from './http-url.js';

/**
 * The keys the gateway needs as an OAuth 2.1 client of an authorization server (authorization code +
 * PKCE), shared by an upstream's user consent (`auth.type: user-oauth`) and the consent check's own sign-in
 * (`vault.verifyUser`).
 */
export const oauthClientFields = {
  clientId: z.string().min(1),
  /** A confidential client's secret (write it as ${ENV}) or clientSecretFile; neither: a public client. */
  clientSecret: z.string().min(1).optional(),
  clientSecretFile: z.string().min(1).optional(),
  /** The authorization server's issuer URL (RFC 8414 or OpenID metadata gives the endpoints). */
  authorizationServer: httpUrl('an authorization server issuer').optional(),
  /** Both endpoints written out: no discovery at all. */
  authorizationEndpoint: httpUrl('an authorization endpoint').optional(),
  tokenEndpoint: httpUrl('a token endpoint').optional(),
  scope: z.string().optional(),
  /** RFC 8707 resource indicator. */
  resource: httpUrl('a resource indicator').optional(),
};

interface OAuthClientKeys {
  clientSecret?: string | undefined;
  clientSecretFile?: string | undefined;
  authorizationEndpoint?: string | undefined;
  tokenEndpoint?: string | undefined;
}

/** The checks every such client's keys pass: one secret at most, both endpoints or neither. */
export function oauthClientChecks<T extends z.ZodType<OAuthClientKeys>>(schema: T) {
  return schema
    .refine((a) => a.clientSecret === undefined || a.clientSecretFile === undefined, { message: 'set clientSecret or clientSecretFile, not both', path: ['clientSecret'] })
    .refine((a) => (a.authorizationEndpoint === undefined) === (a.tokenEndpoint === undefined), { message: 'set both authorizationEndpoint and tokenEndpoint, or neither (discovery)', path: ['tokenEndpoint'] });
}
