import type { UpstreamConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { ConsentState } from './consent-flows.js';
import { userLabel } from './upstream-user.js';
import { vaultAudience } from './vault-audience.js';

/**
 * The refusal of a consent callback when what the upstream is (its URL, resource, token endpoint or
 * authorization server: vaultAudience) is no longer what it was when the browser was sent to its
 * authorization server: a reload changed it meanwhile, or the upstream no longer asks for consent. The user
 * consented to give that server, for that resource, a token; redeemed and sealed for the new binding, the
 * new server would have been sent it. Undefined when the binding stands (or a record from an earlier
 * version names none). 409: the request was right, the gateway changed under it; the user starts again.
 */
export function changedBinding(s: ConsentState, u: UpstreamConfig | undefined, logger: Logger): { refused: string; status: number } | undefined {
  if (!u) return { refused: `Upstream "${s.upstream}" no longer asks for consent.`, status: 400 };
  if (s.audience === undefined || s.audience === vaultAudience(u)) return undefined;
  logger.warn({ upstream: s.upstream, user: userLabel(s.user) }, "consent callback refused: a reload changed the upstream's URL, resource or authorization server since the consent began; nothing was linked");
  const refused = `The settings of upstream "${s.upstream}" changed since you started (its server or resource), so the consent you gave was for what it was before and nothing was linked. Retry the call in your client for a new link.`;
  return { refused, status: 409 };
}

/**
 * Where the gateway's own sign-in (vault.verifyUser) sends the browser back: a redirect URI of its own, not
 * the upstreams' /oauth/callback. With one URI for both, an upstream's authorization server given the
 * browser (with its state and PKCE challenge) sent it on to the gateway's identity provider under the
 * gateway's client and that URI; the user, signed in there a moment before, got a code at once, which came
 * back with the upstream's state and was redeemed at that upstream's token endpoint with the verifier: the
 * attacker redeemed it at the identity provider and held the user's gateway access token (the mix-up attack,
 * RFC 9700 §4.4; one redirect URI per authorization server is its defence). An identity provider that
 * matches redirect URIs exactly (OAuth 2.1) now refuses to send such a code here, and one that does not
 * sends it to a route that refuses the upstream's state (misrouted).
 */
export function signInRedirectUri(publicUrl: string): string {
  return `${publicUrl}/oauth/callback/sign-in`;
}

/**
 * The refusal of an authorization response that came back to the other redirect URI than its state's: a
 * sign-in state at /oauth/callback, or an upstream's at the sign-in's (see signInRedirectUri). Its code is
 * redeemed nowhere. Undefined when it came back where it was sent from.
 */
export function misrouted(s: ConsentState, at: 'callback' | 'sign-in', logger: Logger): { refused: string; status: number } | undefined {
  if ((s.stage === 'verify') === (at === 'sign-in')) return undefined;
  logger.warn({ upstream: s.upstream, user: userLabel(s.user), at }, "consent callback refused: the answer came back to another redirect URI than its state's (a mix-up attack?); its code was not redeemed");
  return { refused: 'Nothing was linked: the answer came back to the wrong address for this sign-in. Retry the call in your client for a new link.', status: 400 };
}
