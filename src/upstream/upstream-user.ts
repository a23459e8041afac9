import { createHash } from 'node:crypto';
import { GatewayError } from '../errors.js';

/** The principal a per-user instance or credential belongs to (issuer + subject + tenant, as sessions are bound). */
export interface UpstreamUser {
  readonly issuer: string;
  readonly subject: string;
  readonly tenant: string;
  /**
   * The client session an instance serves, for token exchange: its latest verified token (`principal`, as
   * the edge recorded it) is the subject_token, never a token another session of the same user presented.
   * Not part of userKey: the vault's links and consent are the user's, whichever session.
   */
  readonly session?: { readonly id: string; readonly principal?: object | undefined; readonly sharedByTokens?: boolean | undefined } | undefined;
}

/** An unambiguous map key for a user (a subject may contain any character). */
export function userKey(u: UpstreamUser): string {
  return JSON.stringify([u.issuer, u.subject, u.tenant]);
}

/**
 * A stable pseudonym for log lines and operators' views: which user an instance serves can be told
 * apart and followed across lines without writing subjects (personal data) into the logs.
 */
export function userLabel(u: UpstreamUser): string {
  return `u-${createHash('sha256').update(userKey(u)).digest('hex').slice(0, 12)}`;
}

/**
 * A per-user credential's failure that only its user can end: no consent given (-32042 with the link to
 * give it), too many consent links of theirs pending (SWB_RATE_LIMITED with details.awaitsConsent: open
 * one they were given), or no unexpired token of theirs to exchange (no_subject_token, details.awaitsConsent:
 * their next request brings one). An instance that failed to start for it waits for the user's next request
 * (no timed restart, nothing logged as an error), and the user is told it as it was said.
 */
export function awaitsUser(err: unknown): boolean {
  return err instanceof GatewayError && (err.code === 'SWB_UPSTREAM_CONSENT_REQUIRED' || err.details?.awaitsConsent === true);
}
