import type { JsonRpcMessage, JsonRpcResponse, RequestId } from '../jsonrpc/types.js';
import type { ModernCall } from './modern-request.js';

/**
 * Told when an attempt's client goes before its answer (the exchange, or a listen stream): an object,
 * so that no request stores a function literal in a property (see ModernReply.owner).
 */
export interface AttemptOwner {
  detach(sink: AttemptSink): void;
}

/** Where an attempt's answer goes: the HTTP reply of the POST that is waiting. */
export interface AttemptSink {
  readonly id: RequestId;
  readonly call: ModernCall;
  /** False once the answer is out or the client has gone. */
  readonly open: boolean;
  owner: AttemptOwner | undefined;
  notify(message: JsonRpcMessage): void;
  finish(response: JsonRpcResponse, status?: number): void;
}
