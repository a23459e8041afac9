import { GatewayError, type GatewayErrorCode } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { TransportError } from '../transport/transport.js';
import { awaitsUser } from './upstream-user.js';
import { headerValue } from './http-headers.js';
import { retryAfterMs, throttledError } from './upstream-throttle.js';

/** The upstream no longer knows our MCP session (HTTP 404, or a 400 that says so): re-initialize. */
export function sessionExpired(upstream: string, status = 404): TransportError {
  return new TransportError('session-expired', `upstream "${upstream}" no longer knows the gateway's session (HTTP ${status}); re-initializing`);
}

/**
 * A request's POST refused for the session it named (see sessionExpired): the upstream did not take it, so it
 * never ran. It fails as never sent (details.unsent): UpstreamInstance sends it again once re-initialized,
 * once, whatever its method; the circuit does not count it.
 */
export function refusedForSession(upstream: string, status: number): GatewayError {
  return new GatewayError('SWB_UPSTREAM_SESSION_EXPIRED', `upstream "${upstream}" no longer knows the gateway's session (HTTP ${status}), and did not take the request; re-initializing`, { upstream, unsent: true });
}

export class UpstreamHttpError extends Error {
  readonly status: number;
  /** What the upstream said (the start of its body), or where its redirect points. */
  readonly detail: string;
  /** A 429's or 503's Retry-After, in ms (see retryAfterMs): the upstream is overloaded, and says for how long. */
  readonly retryAfterMs: number | undefined;
  constructor(upstream: string, status: number, detail: string, retryAfter?: number) {
    super(`upstream "${upstream}" answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'UpstreamHttpError';
    this.status = status;
    this.detail = detail;
    this.retryAfterMs = retryAfter;
  }
}

/**
 * An upstream's refusal of a request to `url` as an error. Remote requests follow no redirect (a POST's body
 * and the gateway's headers and token would go wherever the upstream says, another origin included), so a
 * 3xx names where it points, origin and path only (a query may carry a key): it failed as a bare "HTTP 307",
 * and a Python server mounted at /mcp answers every request to /mcp so. `configured`: `url` is the upstream's
 * own url, which the operator can set to where it points.
 */
export function httpRefusal(upstream: string, res: { statusCode: number; headers: Record<string, string | string[] | undefined> }, url: string, detail: string, configured = true): UpstreamHttpError {
  const overload = res.statusCode === 429 || res.statusCode === 503 ? retryAfterMs(headerValue(res.headers, 'retry-after')) : undefined;
  if (res.statusCode < 300 || res.statusCode >= 400) return new UpstreamHttpError(upstream, res.statusCode, detail, overload);
  const location = headerValue(res.headers, 'location');
  const to = location !== undefined && URL.canParse(location, url) ? new URL(location, url) : undefined;
  const where = to ? `a redirect to ${to.origin}${to.pathname}` : 'a redirect';
  const note = `${where}, which the gateway does not follow${to && configured ? ": set the upstream's url to it" : ''}`;
  return new UpstreamHttpError(upstream, res.statusCode, detail ? `${note}; ${detail}` : note);
}

/**
 * A message over http.maxMessageBytes where a request's answer was read (its JSON body, an event of its
 * stream): that call fails, as one over maxResultBytes does. The upstream answered, so its circuit does
 * not count it: a tool that returned too much 5 times in a row opened the circuit for every other tool.
 */
export function answerTooLarge(upstream: string, limit: number): GatewayError {
  return new GatewayError('SWB_RESULT_TOO_LARGE', `upstream "${upstream}" sent an answer of more than ${limit} bytes (http.maxMessageBytes)`, { upstream, limit });
}

/**
 * A 2026-07-28 request whose headers its server refused as too large (HTTP 431). Their size is the
 * client's: an argument mirrored into an Mcp-Param-* header (x-mcp-header), a resource URI in Mcp-Name. That
 * call fails as its arguments' fault, and the upstream's circuit does not count it: counted as "could not be
 * reached", a few such calls of one client paused the upstream for every other client and tenant.
 */
export function headersTooLarge(upstream: string): GatewayError {
  return new GatewayError('SWB_ARGUMENT_REFUSED', `upstream "${upstream}" refused the request's headers as too large (HTTP 431): an argument mirrored into an Mcp-Param-* header (x-mcp-header), or the name or URI in Mcp-Name, is longer than its server takes`, { upstream, httpStatus: 431 });
}

/**
 * A request whose body its server refused as too large (HTTP 413: the official SDK's server over 4 MiB, Express's
 * json() over 100 KiB). Its size is the client's (its arguments): that call fails as its arguments' fault, and the
 * circuit does not count it, as for headersTooLarge. Counted as "could not be reached", a few such calls of one
 * client paused the upstream for every other client and tenant.
 */
export function bodyTooLarge(upstream: string, status: number, detail: string): GatewayError {
  return new GatewayError('SWB_ARGUMENT_REFUSED', `upstream "${upstream}" refused the request as too large (HTTP ${status}): its arguments are more than its server takes${detail ? ` (${detail})` : ''}`, { upstream, httpStatus: status });
}

/** HTTP 413; or a 400 saying so, as the official SDK's legacy HTTP+SSE server answers ("PayloadTooLargeError: request entity too large"). */
function refusedAsTooLarge(err: UpstreamHttpError): boolean {
  return err.status === 413 || (err.status === 400 && /too large/i.test(err.detail));
}

/**
 * A 400 about this request's body, which differs from request to request: the SDK's "Parse error" (-32700), "Invalid
 * Request" (-32600), "Invalid params" (-32602), the legacy HTTP+SSE server's "Invalid message: …". The upstream is
 * alive and read it. Not a 400 every request would get (its content type, the protocol version, "Server not
 * initialized": the same on each one): that signals a broken upstream, counted as unreachable, as is a bare 400.
 */
function refusedAsMalformed(err: UpstreamHttpError): boolean {
  return err.status === 400 && (/^\s*\{[^]*"code"\s*:\s*-32(?:700|600|602)\b/.test(err.detail) || /^\s*(?:Parse error|Invalid (?:message|request|params))\b/i.test(err.detail));
}

/**
 * An upstream overloaded: 429 (Too Many Requests), or 503 with a Retry-After. A 503 without one stays "could not be
 * reached", counted by the circuit: what a proxy or load balancer with no live backend answers.
 */
function overloaded(err: UpstreamHttpError): boolean {
  return err.status === 429 || (err.status === 503 && err.retryAfterMs !== undefined);
}

/** A failure encodedAnswer made (content-encoding.ts): it reaches its caller as it is, not as "could not be reached". */
export function isEncodedAnswer(err: unknown): boolean {
  return err instanceof GatewayError && err.code === 'SWB_UPSTREAM_PROTOCOL' && typeof err.details?.contentEncoding === 'string';
}

/**
 * A start refused as overloaded (429, or 503 with Retry-After): initialize's answer (already SWB_UPSTREAM_THROTTLED),
 * or the GET of its stream, raw. No protocol answer (it was tried in the other era, then called incompatible), and
 * what its restart waits for (see startRetryAfterMs). undefined: any other failure.
 */
export function throttledStart(upstream: string, err: unknown): GatewayError | undefined {
  if (err instanceof GatewayError) return err.code === 'SWB_UPSTREAM_THROTTLED' ? err : undefined;
  return err instanceof UpstreamHttpError && overloaded(err) ? throttledError(upstream, err.status, err.retryAfterMs ?? 0, 'start') : undefined;
}

/** The failures of a send that reach its caller as they are, not as "could not be reached". */
export const KEPT_AS_IS: ReadonlySet<GatewayErrorCode> = new Set(['SWB_UPSTREAM_CREDENTIAL_REFUSED', 'SWB_UPSTREAM_CONSENT_REQUIRED', 'SWB_RESULT_TOO_LARGE', 'SWB_ARGUMENT_REFUSED']);

/**
 * What a request whose send failed fails with. A credential refused, an answer over http.maxMessageBytes: as
 * it was said (KEPT_AS_IS), as is an answer in a Content-Encoding never asked for (see encodedAnswer). A link whose consent changed (details.unsent): the request never left, and is
 * retried once reconnected. A server not reading what it was sent (busy on a long call): SWB_UPSTREAM_BUSY,
 * which its circuit does not count, as it does not count a full queue: the upstream is alive, and a few
 * refusals must not pause every call for resetTimeoutMs. Throttled (see overloaded): SWB_UPSTREAM_THROTTLED, not
 * counted either, with its Retry-After (see UpstreamThrottle). A 400 about this request (see refusedAsMalformed):
 * SWB_UPSTREAM_REQUEST_REFUSED, not counted either (one client's odd request paused the upstream for all). A body too large (413): the arguments' fault (see
 * bodyTooLarge). Anything else: it could not be reached.
 */
export function sendFailure(upstream: string, err: Error): Error {
  if (err instanceof GatewayError && (KEPT_AS_IS.has(err.code) || awaitsUser(err) || err.details?.unsent === true || isEncodedAnswer(err))) return err;
  if (err instanceof TransportError && err.code === 'session-expired') return new GatewayError('SWB_UPSTREAM_SESSION_EXPIRED', err.message, { upstream });
  if (err instanceof UpstreamHttpError && refusedAsTooLarge(err)) return bodyTooLarge(upstream, err.status, err.detail);
  if (err instanceof UpstreamHttpError && overloaded(err)) return throttledError(upstream, err.status, err.retryAfterMs ?? 0);
  if (err instanceof UpstreamHttpError && refusedAsMalformed(err)) return new GatewayError('SWB_UPSTREAM_REQUEST_REFUSED', `upstream "${upstream}" refused the request (HTTP 400): ${err.detail}`, { upstream, httpStatus: 400 });
  if (err instanceof TransportError && err.code === 'backlogged') return new GatewayError('SWB_UPSTREAM_BUSY', `upstream "${upstream}" is busy: ${err.message}; retry later`, { upstream });
  return new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${upstream}" could not be reached: ${err.message}`, err instanceof UpstreamHttpError ? { upstream, httpStatus: err.status } : { upstream });
}

/**
 * An upstream's JSON-RPC error as read from it; a -32042 (URLElicitationRequired) names that upstream, whose
 * questions its URL elicitations are shown as (see screenedUrlAsks), whatever method it answered.
 */
export function upstreamError(err: JsonRpcError, upstream: string): JsonRpcError {
  if (err.code === ErrorCode.UrlElicitationRequired) err.upstream = upstream;
  return err;
}
