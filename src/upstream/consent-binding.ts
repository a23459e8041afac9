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
