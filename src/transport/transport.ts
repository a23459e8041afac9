import type { JsonRpcMessage, RequestId } from '../jsonrpc/types.js';

export interface SendOptions {
  /** The client request this message belongs to; Streamable HTTP puts it on that request's stream. */
  relatedRequestId?: RequestId | undefined;
}

/**
 * One link that carries JSON-RPC messages, shared by both edges: the client side (an HTTP session)
 * and the upstream side (a child's stdio). Callbacks flow back towards whoever owns the link.
 */
export interface Transport {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  close(): Promise<void>;
  /** The request will get no response (it was cancelled): release whatever waits for one. */
  abandon?(requestId: RequestId): void;
  /** The operating-system process behind the link, when there is one (stdio). */
  readonly pid?: number | undefined;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
}
