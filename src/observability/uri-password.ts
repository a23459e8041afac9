/** `scheme://user:password@` at a URI's start: the password is what is kept out of logs. */
const USERINFO_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*):[^/?#@]*@/i;

/**
 * A resource URI as the audit log and traces record it: with the password of its user information
 * replaced. Servers name resources by connection strings (`postgres://app:secret@db/orders/schema`),
 * and an audit line or span is read by more people than the database's credentials are meant for. The
 * rest (host, path, query) stays: it is what tells resources apart.
 */
export function withoutPassword(uri: string): string {
  // Most URIs have no user information: a character check before the expression.
  return uri.includes('@') ? uri.replace(USERINFO_PASSWORD, '$1:[redacted]@') : uri;
}
