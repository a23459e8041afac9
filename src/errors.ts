import { randomUUID } from 'node:crypto';
import { ErrorCode } from './jsonrpc/error-codes.js';
import { JsonRpcError } from './jsonrpc/json-rpc-error.js';

/**
 * Local error family: a stable string code for logs, metrics and tests, the HTTP status used when the
 * failure is answered at the HTTP level, and the JSON-RPC code used when it is answered on the wire.
 */
const CODES = {
  SWB_CONFIG_INVALID: { status: 500, rpc: ErrorCode.InternalError },
  SWB_UPSTREAM_UNAVAILABLE: { status: 503, rpc: ErrorCode.ServerError },
  SWB_UPSTREAM_CRASHED: { status: 502, rpc: ErrorCode.ServerError },
  SWB_UPSTREAM_TIMEOUT: { status: 504, rpc: ErrorCode.RequestTimeout },
  SWB_UPSTREAM_PROTOCOL: { status: 502, rpc: ErrorCode.ServerError },
  SWB_UPSTREAM_SESSION_EXPIRED: { status: 502, rpc: ErrorCode.ServerError },
  SWB_UPSTREAM_BUSY: { status: 503, rpc: ErrorCode.ServerError },
  SWB_UPSTREAM_THROTTLED: { status: 503, rpc: ErrorCode.ServerError },
  /** A remote upstream refused this one request as malformed (HTTP 400 about its body): alive, not counted by its circuit. */
  SWB_UPSTREAM_REQUEST_REFUSED: { status: 502, rpc: ErrorCode.ServerError },
  SWB_CIRCUIT_OPEN: { status: 503, rpc: ErrorCode.ServerError },
  SWB_POOL_EXHAUSTED: { status: 503, rpc: ErrorCode.ServerError },
  SWB_SESSION_CLOSED: { status: 404, rpc: ErrorCode.ServerError },
  SWB_SHUTTING_DOWN: { status: 503, rpc: ErrorCode.ServerError },
  /** The shared session store (Redis) could not be read, or is recovering: retry, the session may be alive. */
  SWB_STORE_UNAVAILABLE: { status: 503, rpc: ErrorCode.ServerError },
  SWB_NOT_ROUTABLE: { status: 500, rpc: ErrorCode.InternalError },
  SWB_CLIENT_CAPABILITY: { status: 400, rpc: ErrorCode.MethodNotFound },
  SWB_RATE_LIMITED: { status: 429, rpc: ErrorCode.ServerError },
  SWB_FORBIDDEN: { status: 403, rpc: ErrorCode.InvalidRequest },
  /** A tool whose definition changed since it was pinned (tool pinning), until an operator approves it. */
  SWB_TOOL_WITHHELD: { status: 403, rpc: ErrorCode.InvalidParams },
  /** A tenant argument rule refused a tools/call before it was forwarded. */
  SWB_ARGUMENT_REFUSED: { status: 400, rpc: ErrorCode.InvalidParams },
  /** A retry's requestState was refused (details.reason says why); nothing was forwarded. */
  SWB_REQUEST_STATE_INVALID: { status: 400, rpc: ErrorCode.InvalidParams },
  /** A confirmation rule asked the user, who declined or cancelled (details.outcome); nothing was forwarded. */
  SWB_CONFIRMATION_DECLINED: { status: 403, rpc: ErrorCode.ServerError },
  /** A confirmation rule asked the user, who did not answer in time; nothing was forwarded. */
  SWB_CONFIRMATION_TIMEOUT: { status: 408, rpc: ErrorCode.RequestTimeout },
  /** A confirmation rule needs to ask, and the client declared no form elicitation; nothing was forwarded. */
  SWB_CONFIRMATION_UNSUPPORTED: { status: 400, rpc: ErrorCode.InvalidRequest },
  /** An upstream needs URLs visited before a call (-32042), and the 2026-07-28 client's user declined or cancelled (details.outcome). */
  SWB_URL_ELICITATION_DECLINED: { status: 403, rpc: ErrorCode.ServerError },
  SWB_SANDBOX_UNAVAILABLE: { status: 503, rpc: ErrorCode.ServerError },
  SWB_RESULT_TOO_LARGE: { status: 502, rpc: ErrorCode.ServerError },
  /** An upstream's answer held hidden text and hidden-text scanning blocks results (details: the findings, never the text). */
  SWB_HIDDEN_TEXT_BLOCKED: { status: 502, rpc: ErrorCode.ServerError },
  /** An upstream's elicitation claimed the gateway's own voice (details.field, details.upstream): refused to it, put to no one. */
  SWB_ELICITATION_REFUSED: { status: 502, rpc: ErrorCode.ServerError },
  /** A per-user upstream credential could not be had: the authorization server refused the exchange (details.reason). */
  SWB_UPSTREAM_CREDENTIAL_REFUSED: { status: 403, rpc: ErrorCode.ServerError },
  /** The user has not linked (or no longer has) an account at a user-oauth upstream: details.elicitations holds the URL to consent at. */
  SWB_UPSTREAM_CONSENT_REQUIRED: { status: 403, rpc: ErrorCode.UrlElicitationRequired },
  /** A 2025 session at MAX_SUBSCRIPTIONS_PER_SESSION (or MAX_SUBSCRIBED_URI_CHARS) asked to subscribe to one more resource. */
  SWB_SUBSCRIPTION_LIMIT: { status: 400, rpc: ErrorCode.InvalidRequest },
} as const satisfies Record<string, { status: number; rpc: number }>;

export type GatewayErrorCode = keyof typeof CODES;

/** Whether a value (an error's data.code, which an upstream's error has too) is one of the gateway's own codes. */
export const isGatewayErrorCode = (value: unknown): value is GatewayErrorCode => typeof value === 'string' && Object.hasOwn(CODES, value);

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: GatewayErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
    this.status = CODES[code].status;
    this.details = details;
  }
}

/** Where internal errors are reported: a pino logger, or anything with its `error` method. */
export interface IncidentLog {
  error(obj: Record<string, unknown>, msg: string): void;
}

/**
 * The one place a local failure becomes a wire error. Anything unknown is an internal error: the
 * client gets an incident id (never the cause, which may show internals), and the log gets the same id
 * with the error and its stack, so an operator can find what a user reports.
 */
export function toJsonRpcError(err: unknown, log?: IncidentLog): JsonRpcError {
  if (err instanceof JsonRpcError) return err;
  if (err instanceof GatewayError) {
    const rpc = CODES[err.code].rpc;
    if (rpc !== ErrorCode.InternalError) return new JsonRpcError(rpc, err.message, { code: err.code, ...err.details });
    const incident = report(err, log);
    return new JsonRpcError(rpc, `${err.message} (incident ${incident})`, { code: err.code, ...err.details, incident });
  }
  const incident = report(err, log);
  return new JsonRpcError(ErrorCode.InternalError, `Internal error (incident ${incident})`, { incident });
}

function report(err: unknown, log: IncidentLog | undefined): string {
  const incident = randomUUID();
  // pino's err serializer keeps the type, message and stack; anything thrown that is not an Error is kept as is.
  log?.error({ incident, err: err instanceof Error ? err : { thrown: String(err) } }, 'internal error answered with -32603');
  return incident;
}

/**
 * A shared store's command that failed (Redis unreachable, unanswered in time, or refusing: full, read-only)
 * as SWB_STORE_UNAVAILABLE, for a 503 and a retry rather than a 500 and a stack; a GatewayError is kept.
 * The cause (a Redis address) is not in the message, which may reach a client: the connection logs it.
 */
export function storeFailed(err: unknown): never {
  throw err instanceof GatewayError ? err : new GatewayError('SWB_STORE_UNAVAILABLE', 'the shared store (redis) is unreachable or refused the command; retry shortly');
}
