import { createHash } from 'node:crypto';

/** The principal a per-user instance or credential belongs to (issuer + subject + tenant, as sessions are bound). */
export interface UpstreamUser {
  readonly issuer: string;
  readonly subject: string;
  readonly tenant: string;
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
