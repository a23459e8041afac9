import { GatewayError, type GatewayErrorCode } from '../errors.js';
import { TransportError } from '../transport/transport.js';

/** The upstream no longer knows our MCP session (HTTP 404): re-initialize. */
export function sessionExpired(upstream: string): TransportError {
  return new TransportError('session-expired', `upstream "${upstream}" no longer knows the gateway's session (HTTP 404); re-initializing`);
}

export class UpstreamHttpError extends Error {
  readonly status: number;
  constructor(upstream: string, status: number, detail: string) {
    super(`upstream "${upstream}" answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'UpstreamHttpError';
    this.status = status;
  }
}

/**
 * A message over http.maxMessageBytes where a request's answer was read (its JSON body, an event of its
 * stream): that call fails, as one over maxResultBytes does. The upstream answered, so its circuit does
 * not count it: a tool that returned too much 5 times in a row opened the circuit for every other tool.
 */
export function answerTooLarge(upstream: string, limit: number): GatewayError {
  return new GatewayError('SWB_RESULT_TOO_LARGE', `upstream "${upstream}" sent an answer of more than ${limit} bytes (http.maxMessageBytes)`, { upstream, limit });
}

/** The failures of a send that reach its caller as they are, not as "could not be reached". */
export const KEPT_AS_IS: ReadonlySet<GatewayErrorCode> = new Set(['SWB_UPSTREAM_CREDENTIAL_REFUSED', 'SWB_UPSTREAM_CONSENT_REQUIRED', 'SWB_RESULT_TOO_LARGE']);
