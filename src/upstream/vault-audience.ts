import type { UpstreamConfig } from '../config/schema.js';

/**
 * What a user's link to an upstream was given for, beyond its name: the resource the token is for (its
 * RFC 8707 indicator, else the upstream's URL) and the authorization server it came from (the token
 * endpoint its refresh token is sent to, else the issuer, else what the URL's metadata names). The vault
 * seals a link with it as associated data, so a reload that points the name at another server (another
 * URL, another token endpoint) does not hand that server the tokens another one issued: the link no
 * longer opens, and the user is asked to consent again. Undefined for a name that is no longer a
 * user-oauth upstream: none of its links opens.
 */
export function vaultAudience(u: UpstreamConfig | undefined): string | undefined {
  if (u?.auth?.type !== 'user-oauth') return undefined;
  const { resource, tokenEndpoint, authorizationServer } = u.auth;
  return JSON.stringify([resource ?? ('url' in u ? u.url : ''), tokenEndpoint ?? authorizationServer ?? '']);
}
