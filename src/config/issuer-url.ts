/**
 * Whether an issuer can be published as an OAuth authorization server (RFC 9728 `authorization_servers`):
 * an RFC 8414 issuer identifier is a URL without query or fragment. Clients (mcp-remote, the SDKs) parse
 * each entry as a URL before anything else, so one plain name such as "switchboard-dev" breaks them all.
 * http is accepted beside https for loopback development issuers.
 */
export function isUrlIssuer(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.search === '' && url.hash === '';
}
