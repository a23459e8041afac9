import type { JsonRpcMessage, RequestId } from '../jsonrpc/types.js';

export interface SendOptions {
  /** The client request this message belongs to; Streamable HTTP puts it on that request's stream. */
  relatedRequestId?: RequestId | undefined;
}

/**
 * One link that carries JSON-RPC messages, shared by both edges: the client side (an HTTP session)
 * and the upstream side (a child's stdio). Callbacks flow back towards whoever owns the link.
 */
export interface MessageExtra {
  relatedRequestId?: RequestId;
  /** The message's size on the wire, when the transport knows it without extra work (for result limits). */
  bytes?: number;
}

export interface Transport {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  close(): Promise<void>;
  /** Resolves once the link can receive everything the peer may send on its own (e.g. a GET stream is open). */
  opened?(): Promise<void>;
  /** The request will get no response (it was cancelled): release whatever waits for one. */
  abandon?(requestId: RequestId): void;
  /** The operating-system process behind the link, when there is one (stdio). */
  readonly pid?: number | undefined;
  /** Why the link closed, when it was closed for a reason the caller should hear (e.g. a flood). */
  readonly closeReason?: string | undefined;
  /**
   * `extra.relatedRequestId`: the request (in this link's own id space) whose stream carried the
   * message, when the transport knows it (Streamable HTTP does; stdio cannot).
   */
  onmessage?: (message: JsonRpcMessage, extra?: MessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
}
