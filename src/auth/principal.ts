/** Who is calling, as the verified token says. Sessions are bound to issuer + subject. */
export interface Principal {
  issuer: string;
  subject: string;
  tenant: string;
  scopes: ReadonlySet<string>;
  /** The token's `aud` values (which endpoints it may be used on: see endpointAudiences); undefined with auth off. */
  audience?: readonly string[];
  /**
   * When the gateway stops accepting the token (its `exp` plus auth.clockToleranceSec, epoch ms); undefined
   * with auth off. What outlives one request (a subscriptions/listen stream, a 2025 GET stream) ends then
   * (atExpiry): authorized once, it would otherwise go on for as long as its connection holds.
   */
  expiresAt?: number;
}

export function samePrincipal(a: Principal, b: Principal): boolean {
  return a.issuer === b.issuer && a.subject === b.subject && a.tenant === b.tenant;
}

/** Longest a Node timer waits (a longer delay fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Where a stream keeps its expiry timer (at most one: re-armed in place), for clearTimeout when it closes. */
export interface ExpiryTimer {
  timer?: NodeJS.Timeout;
}

/**
 * Calls `expired` once `expiresAt` (Principal.expiresAt) has passed; nothing when undefined (auth off, or a
 * token without exp). One unref'd timer, kept in `holder` for its owner to clear when it closes: it must not
 * hold the process open. A token living longer than a timer can wait is looked at again then.
 */
export function atExpiry(expiresAt: number | undefined, expired: () => void, holder: ExpiryTimer): void {
  if (expiresAt === undefined) return;
  const left = expiresAt - Date.now();
  if (left > MAX_TIMER_MS) holder.timer = setTimeout(() => atExpiry(expiresAt, expired, holder), MAX_TIMER_MS).unref();
  else holder.timer = setTimeout(expired, Math.max(0, left)).unref();
}

/** The principal of every request when auth is off (loopback only). */
export const ANONYMOUS: Principal = Object.freeze({ issuer: 'local', subject: 'anonymous', tenant: 'anonymous', scopes: new Set<string>() });
