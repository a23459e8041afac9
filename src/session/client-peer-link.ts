import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { PeerLink } from '../jsonrpc/peer.js';
import type { JsonRpcMessage, RequestId } from '../jsonrpc/types.js';

/** The link for requests put to a client session: errors in the terms a client (and the upstream behind it) knows. */
export function clientPeerLink(send: (m: JsonRpcMessage, related: RequestId | undefined) => Promise<void>, timeoutMs: number): PeerLink {
  return {
    send,
    timeoutError: (method, ms) => new JsonRpcError(ErrorCode.RequestTimeout, `the client did not answer "${method}" within ${ms ?? timeoutMs} ms`),
    cancelledError: () => new JsonRpcError(ErrorCode.InternalError, 'cancelled'),
    timeoutReason: 'the client did not answer in time',
    cancelReason: 'cancelled',
  };
}
