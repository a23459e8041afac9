/**
 * `scheme://user:password@` at a URI's start: the password is what is kept out of logs. The user
 * information ends at the authority's last "@" and the password starts at its first ":", as a URL
 * parser reads them: stopped at the first "@", a password with one unescaped (`app:p@ss@db`) left its
 * tail in the line, and a user name with one (`me@corp:pw@host`) the whole password.
 */
const USERINFO_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#:]*):[^/?#]*@/i;

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

/** `scheme://user:password@` anywhere in a text (no white space inside): an error message that quotes a URI. */
const ANY_USERINFO_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^/?#:\s]*):[^/?#\s]*@/gi;

/** A text (an upstream's error message) with the password of every URI in it replaced, as withoutPassword does. */
export function withoutPasswords(text: string): string {
  return text.includes('@') ? text.replace(ANY_USERINFO_PASSWORD, '$1:[redacted]@') : text;
}
