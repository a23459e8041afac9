import { GatewayError } from '../errors.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { isEncodedAnswer, throttledStart } from './remote-errors.js';

/**
 * Whether a start's failure in one era is the upstream's answer that it does not speak that era (then the other is
 * tried; refused in every era, it is incompatible), or a failure to start that the restart retries with the backoff.
 * Kept apart from UpstreamClient.connect, which tries the eras: which failures count as an answer is its own rule.
 * `probing`: another era may follow this one.
 */
export function eraRefused(upstream: string, err: unknown, era: 'legacy' | 'modern', probing: boolean): boolean {
  // A JSON-RPC error answers. Anything else the gateway did not code is its link failing, not an answer: the session's
  // GET stream refused (HTTP 500) or a connection reset, once initialize had been answered, made it "incompatible".
  if (!(err instanceof GatewayError)) return err instanceof JsonRpcError;
  if (throttledStart(upstream, err)) return false; // overloaded (429, 503 + Retry-After): its restart waits (see UpstreamInstance)
  // In a Content-Encoding never asked for (a compressing proxy): the answer was never read, so it refused nothing. Counted,
  // both eras so answered made the upstream "incompatible" instead of naming the encoding to turn off.
  if (isEncodedAnswer(err)) return false;
  // A dead or hanging upstream is not a protocol answer: try nothing else. An HTTP refusal (4xx)
  // of the request is one (a legacy server refuses server/discover, a modern one initialize).
  const refused = err.details?.httpStatus !== undefined && Number(err.details.httpStatus) >= 400 && Number(err.details.httpStatus) < 500;
  const probeTimedOut = err.code === 'SWB_UPSTREAM_TIMEOUT' && era === 'modern' && probing;
  return err.code === 'SWB_UPSTREAM_PROTOCOL' || refused || probeTimedOut;
}
