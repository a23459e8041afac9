import type { EdgeRequest } from './edge-exchange.js';
import { AuthError } from '../auth/auth-error.js';
import type { CredentialInput } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { authorizationHeaders, tokenInQuery } from '../listener/request-credentials.js';
import type { Refusal } from './replies.js';

/** What the edge needs from authentication and tenant policy, as plain functions. */
export interface EdgeAuth {
  /** The principal, at once when no token needs verifying (auth off), else once verified. */
  authenticate(input: CredentialInput): Principal | Promise<Principal>;
  /** Why this principal's token is not one for the endpoint (issued for another endpoint's resource), or undefined. */
  notFor?(principal: Principal, path: string): string | undefined;
  /**
   * The upstreams served by the endpoints this principal's token was issued for, when each of its audiences
   * names one endpoint; undefined when it is for the gateway as a whole (or there is no token). A user's
   * /oauth/links shows and revokes only the links to these.
   */
  upstreamsOnly?(principal: Principal): ReadonlySet<string> | undefined;
  /** Why this principal may not use the endpoint, or undefined. */
  forbidden(principal: Principal, path: string): string | undefined;
  /** The endpoint's scopes (endpoints[].scopes) this principal's token lacks, or undefined. */
  lacking?(principal: Principal, path: string): string[] | undefined;
  /** The endpoint's scopes as a challenge's scope value (space-separated), or undefined when it has none. */
  scopeOf?(path: string): string | undefined;
  /**
   * 0 (their tokens taken), or milliseconds until the tenant's rate limit lets `requests` requests
   * through together (all or none); Infinity: more than the burst, never.
   */
  admit(principal: Principal, requests: number): number | Promise<number>;
  /** The RFC 9728 metadata URL for an endpoint, as this request's client reaches the gateway. */
  metadataUrl(path: string, req: EdgeRequest): string;
  /** Seen on each refusal, for metrics and logs. */
  onFailure?(reason: string): void;
}

function credentials(req: EdgeRequest): CredentialInput {
  const authorization = authorizationHeaders(req.raw.rawHeaders);
  return { authorization, tokenInQuery: tokenInQuery(req.url) };
}

/**
 * A challenge parameter's quoted value, holding only what RFC 6750 §3 lets one hold (%x20-21 / %x23-5B /
 * %x5D-7E). An error_description can quote a forged token's own header (jose names an unrecognized "crit"
 * extension, checked before any signature): a line break or a character past Latin-1 there made Node
 * refuse the header, and anyone, with no key, was answered 500 with an error log line instead of 401.
 */
function quoted(s: string): string {
  return `"${s.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '')}"`;
}

/**
 * Authenticates a request from its headers alone and applies the tenant's endpoint grant and, unless
 * `rateLater` (its route counts it), its rate limit. Returns the principal, or the refusal to answer
 * (401/400/403 with WWW-Authenticate, 429 with Retry-After, 503 when the key set cannot be fetched).
 * `metadataPath`: whose protected resource metadata a challenge names (see LEGACY_METADATA).
 * Synchronous whenever every step is (no auth, no rate limit): the hot path then costs no promise.
 */
export function authorizeRequest(auth: EdgeAuth, req: EdgeRequest, path: string, rateLater = false, metadataPath = path): Principal | Refusal | Promise<Principal | Refusal> {
  let p: Principal | Promise<Principal>;
  try {
    p = auth.authenticate(credentials(req));
  } catch (err) {
    return authRefusal(auth, req, metadataPath, err, path);
  }
  if (p instanceof Promise) return p.then((principal) => forEndpoint(auth, req, principal, path, rateLater, metadataPath), (err: unknown) => authRefusal(auth, req, metadataPath, err, path));
  return forEndpoint(auth, req, p, path, rateLater, metadataPath);
}

/** A token issued for another endpoint is invalid here (401, the challenge naming this one's metadata, so the client gets one for it); then admitted. */
function forEndpoint(auth: EdgeAuth, req: EdgeRequest, principal: Principal, path: string, rateLater: boolean, metadataPath: string): Principal | Refusal | Promise<Principal | Refusal> {
  const notFor = auth.notFor?.(principal, path);
  if (notFor) return authRefusal(auth, req, metadataPath, new AuthError(401, 'invalid_token', 'claim_aud', notFor), path);
  return admitted(auth, req, principal, path, rateLater, metadataPath);
}

/**
 * The metadata a challenge on the legacy HTTP+SSE paths names: the gateway's own (resource: the public
 * URL). A client checks that the resource it is told covers the URL it connects to before it asks for a
 * token (RFC 9728 §7.3; the SDK's selectResourceURL), and /sse or /messages is not under the endpoint's
 * <publicUrl>/mcp: named that one, every SDK-based client failed its sign-in on the legacy transport.
 */
export const LEGACY_METADATA = '';

/**
 * Authentication alone, for the gateway's own routes that belong to no endpoint (a user's links):
 * the principal, or the refusal (401 with WWW-Authenticate naming the root metadata).
 */
export function authenticateRequest(auth: EdgeAuth, req: EdgeRequest): Principal | Refusal | Promise<Principal | Refusal> {
  try {
    const p = auth.authenticate(credentials(req));
    return p instanceof Promise ? p.catch((err: unknown) => authRefusal(auth, req, '', err)) : p;
  } catch (err) {
    return authRefusal(auth, req, '', err);
  }
}

/**
 * The refusal of a request authentication refused. A 401 on an endpoint (`endpoint`) names its scopes
 * (endpoints[].scopes) in the challenge: the MCP authorization spec's scope selection has a client ask
 * for those first, and for every scope in scopes_supported only when the challenge names none.
 */
function authRefusal(auth: EdgeAuth, req: EdgeRequest, path: string, err: unknown, endpoint?: string): Refusal {
  if (!(err instanceof AuthError)) throw err;
  auth.onFailure?.(err.reason);
  let challenge = `Bearer resource_metadata=${quoted(auth.metadataUrl(path, req))}`;
  if (err.error) challenge += `, error=${quoted(err.error)}, error_description=${quoted(err.message)}`;
  const scope = err.scope ?? (err.status === 401 && endpoint !== undefined ? auth.scopeOf?.(endpoint) : undefined);
  if (scope) challenge += `, scope=${quoted(scope)}`;
  const headers: Record<string, string> = err.status === 503 ? { 'retry-after': '5' } : { 'www-authenticate': challenge };
  return { status: err.status, message: err.message, code: err.status === 503 ? ErrorCode.ServerError : ErrorCode.InvalidRequest, headers };
}

/** The endpoint grant, then its scopes (step-up), then (unless `rateLater`) the rate limit, which may need the shared counters: a promise then. */
function admitted(auth: EdgeAuth, req: EdgeRequest, principal: Principal, path: string, rateLater: boolean, metadataPath: string): Principal | Refusal | Promise<Principal | Refusal> {
  const why = auth.forbidden(principal, path);
  if (why) {
    auth.onFailure?.('forbidden');
    return { status: 403, message: `Forbidden: ${why}`, code: ErrorCode.InvalidRequest, headers: {} };
  }
  const missing = auth.lacking?.(principal, path);
  if (missing) return insufficientScope(auth, req, metadataPath, missing);
  if (rateLater) return principal;
  const refused = owedRate(auth, principal);
  return refused instanceof Promise ? refused.then((r) => r ?? principal) : (refused ?? principal);
}

/**
 * The tenant's rate for `requests` requests (all or none): the 429 when it does not cover them now, or
 * undefined. The front door takes one for a GET or DELETE; a POST's route takes one per JSON-RPC request
 * of its body (see EdgeRequest.rateOwed).
 */
export function owedRate(auth: EdgeAuth, principal: Principal, requests = 1): Refusal | undefined | Promise<Refusal | undefined> {
  const wait = auth.admit(principal, requests);
  return wait instanceof Promise ? wait.then((ms) => rateRefusal(principal, ms, requests)) : rateRefusal(principal, wait, requests);
}

/** The 429 for a request (or a batch of `requests`) the tenant's rate does not let through now; undefined: it does. */
export function rateRefusal(principal: Principal, waitMs: number, requests = 1): Refusal | undefined {
  if (waitMs <= 0) return undefined;
  if (waitMs === Infinity) {
    const message = `Too Many Requests: a batch of ${requests} requests is more than tenant "${principal.tenant}" may send at once (its burst); send them in smaller batches`;
    return { status: 429, message, code: ErrorCode.ServerError, headers: {}, data: { code: 'SWB_RATE_LIMITED' } };
  }
  const s = Math.ceil(waitMs / 1000);
  const what = requests > 1 ? `; a batch of ${requests} requests counts as ${requests}` : '';
  // The wait in the body too, as a session limit's 429 says it: a client may see only the JSON-RPC error.
  const data = { code: 'SWB_RATE_LIMITED', retryAfterSeconds: s };
  return { status: 429, message: `Too Many Requests: tenant "${principal.tenant}" is over its request rate${what}; retry after ${s} s`, code: ErrorCode.ServerError, headers: { 'retry-after': String(s) }, data };
}

/**
 * A 403 that asks the client to obtain a token with more scopes (step-up authorization): `scopes`, the ones
 * the request lacks, and with them those of its `endpoint` (endpoints[].scopes), which the token has: a
 * client may ask for the challenge's scopes alone, and a token without the endpoint's would be refused next.
 */
export function insufficientScope(auth: EdgeAuth, req: EdgeRequest, path: string, scopes: string[], endpoint?: string): Refusal {
  const scope = scopes.join(' ');
  const own = endpoint === undefined ? undefined : auth.scopeOf?.(endpoint);
  const asked = own ? `${own} ${scope}` : scope;
  const challenge = `Bearer resource_metadata=${quoted(auth.metadataUrl(path, req))}, error="insufficient_scope", scope=${quoted(asked)}, error_description=${quoted(`this request needs the scope ${scope}`)}`;
  auth.onFailure?.('insufficient_scope');
  return { status: 403, message: `Forbidden: this request needs the scope ${scope}`, code: ErrorCode.InvalidRequest, headers: { 'www-authenticate': challenge } };
}
