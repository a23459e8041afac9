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
   * with auth off. What outlives one request (a subscriptions/listen stream) ends then: authorized once,
   * it would otherwise go on for as long as its connection holds.
   */
  expiresAt?: number;
}

export function samePrincipal(a: Principal, b: Principal): boolean {
  return a.issuer === b.issuer && a.subject === b.subject && a.tenant === b.tenant;
}

/** The principal of every request when auth is off (loopback only). */
export const ANONYMOUS: Principal = Object.freeze({ issuer: 'local', subject: 'anonymous', tenant: 'anonymous', scopes: new Set<string>() });
