// What a browser may do to the admin API. The API takes no cookies, so with admin auth configured a page
// of another site cannot act through a signed-in browser. Without it (allowed on loopback only), any page
// the operator opens could: a "simple" POST (no body, no preflight) to /reload or /upstreams/…/restart
// from another origin, or, after rebinding its own name to 127.0.0.1, every route as same-origin
// (reading the pending pins, then approving them). So a loopback listener answers only requests that
// name it by a loopback name, and no listener answers a request from another origin.

/** The host part of a Host header ("[::1]:9465" → "[::1]", "localhost:9465" → "localhost"). */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1).toLowerCase();
  const colon = host.lastIndexOf(':');
  return (colon < 0 ? host : host.slice(0, colon)).toLowerCase();
}

/** localhost (and *.localhost), 127.0.0.0/8 and ::1: names that cannot be rebound to another machine. */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(name) || name === '[::1]' || name === '::1';
}

/**
 * Why a request is refused for where it comes from, or undefined. `loopback`: the listener is bound to
 * a loopback address. Clients that are not browsers send no Origin and name the listener as they
 * reached it.
 */
export function refuseCrossSite(host: string | undefined, origin: string | undefined, loopback: boolean, fetchSite?: string): string | undefined {
  if (loopback && (host === undefined || !isLoopbackName(hostnameOf(host)))) {
    return `Host "${host ?? ''}" does not name this loopback listener (a page that rebound its name to this machine?)`;
  }
  // A browser sends no Origin with a GET another site's page makes (an <img>, a no-cors fetch, an
  // EventSource): it cannot read the answer, but it could hold the console's event streams or load
  // the API. Sec-Fetch-Site says where such a request comes from; "same-origin" and "none" (typed,
  // bookmarked) are the console's own, and clients that are not browsers send none.
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
    return `a request from another site (Sec-Fetch-Site: ${fetchSite.slice(0, 32)})`;
  }
  if (origin === undefined) return undefined;
  let from: URL;
  try {
    from = new URL(origin);
  } catch {
    return `Origin "${origin}" is not the admin console's own`;
  }
  return from.host === host ? undefined : `Origin "${origin}" is not the admin console's own`;
}
