import type { UpstreamConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { ConsentState } from './consent-flows.js';
import type { CredentialVault } from './credential-vault.js';
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
 * The refusal of a consent begun before the user's link to its upstream was revoked (by the user, an
 * operator or `switchboard links revoke`): completed, it made again the link just revoked. 409, as a reload
 * that changed the upstream: the request was right, the link changed under it; a new link works.
 */
export function revokedMeanwhile(s: ConsentState, logger: Logger): { refused: string; status: number } {
  logger.warn({ upstream: s.upstream, user: userLabel(s.user) }, 'consent callback refused: the link was revoked since the consent began; nothing was linked');
  return { refused: `Your link to upstream "${s.upstream}" was revoked after this consent began, so nothing was linked. To link it again, retry the call in your client for a new link.`, status: 409 };
}

/** Why a consent callback may no longer link (changedBinding, revokedMeanwhile), checked before its code is redeemed; undefined: it may. */
export async function voided(s: ConsentState, u: UpstreamConfig, vault: CredentialVault, logger: Logger): Promise<{ refused: string; status: number } | undefined> {
  return changedBinding(s, u, logger) ?? ((await vault.revokedSince(s.upstream, s.user, s.at ?? 0)) ? revokedMeanwhile(s, logger) : undefined);
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
 * Where an upstream's authorization server sends the browser back. `own` (the default): a redirect URI of
 * the upstream's own. With one URI for every upstream, a malicious upstream's server, given the browser with
 * its state and PKCE challenge, sent it on to an honest upstream's server (the gateway's client_id and
 * registered URI there); the honest server's code came back to the one callback with the malicious state and
 * was redeemed, verifier included, at the malicious token endpoint. RFC 9207 `iss` tells them apart only when
 * servers send it; one redirect URI per authorization server always does (RFC 9700 §4.4.2): the honest
 * server sends its code only to its upstream's URI, where the malicious state is refused (misrouted).
 * `shared`: the one /oauth/callback, for a server where only that is registered (no such defence).
 */
export function upstreamRedirectUri(publicUrl: string, upstream: string, callback: 'own' | undefined): string {
  return callback === 'own' ? `${publicUrl}/oauth/callback/upstream/${upstream}` : `${publicUrl}/oauth/callback`;
}

/** The redirect URI an authorization response came back to: the shared callback, the gateway's sign-in's, or an upstream's own. */
export type CallbackAt = 'callback' | 'sign-in' | { upstream: string };

/** Whether an answer at `at` is where a state was sent back to (see signInRedirectUri, upstreamRedirectUri). */
function sentTo(s: ConsentState, at: CallbackAt): boolean {
  if (s.stage === 'verify' || at === 'sign-in') return s.stage === 'verify' && at === 'sign-in';
  return at === 'callback' ? s.callback !== 'own' : s.callback === 'own' && s.upstream === at.upstream;
}

/**
 * The refusal of an authorization response that came back to another redirect URI than its state's: a
 * sign-in state at an upstream's callback, an upstream's at the sign-in's (see signInRedirectUri), or at
 * another upstream's (see upstreamRedirectUri). Its code is redeemed nowhere. Undefined when it came back
 * where it was sent from.
 */
export function misrouted(s: ConsentState, at: CallbackAt, logger: Logger): { refused: string; status: number } | undefined {
  if (sentTo(s, at)) return undefined;
  logger.warn({ upstream: s.upstream, user: userLabel(s.user), at: typeof at === 'string' ? at : `upstream/${at.upstream}` }, "consent callback refused: the answer came back to another redirect URI than its state's (a mix-up attack?); its code was not redeemed");
  return { refused: 'Nothing was linked: the answer came back to the wrong address for this sign-in. Retry the call in your client for a new link.', status: 400 };
}
