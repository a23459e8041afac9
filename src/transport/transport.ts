import type { JsonRpcMessage, RequestId } from '../jsonrpc/types.js';

export interface SendOptions {
  /** The client request this message belongs to; Streamable HTTP puts it on that request's stream. */
  relatedRequestId?: RequestId | undefined;
}

export interface MessageExtra {
  relatedRequestId?: RequestId;
  /** The message's size on the wire, when the transport knows it without extra work (for result limits). */
  bytes?: number;
}

/** Why a link failed or closed, by code, so its owner acts on the code and never on the message. */
export type TransportErrorCode =
  /** The far end no longer knows our session (Streamable HTTP 404): start a fresh one at once. */
  | 'session-expired'
  /** The far end wrote a message past the link's size limit (a flood): the link was cut. */
  | 'message-too-large'
  /** A stdio server wrote lines that are not JSON-RPC past their budget (a flood): the link was cut. */
  | 'not-json-rpc'
  /** The far end closed its output but runs on, so it can answer nothing: the link was cut. */
  | 'output-closed'
  /** The far end closed its input but runs on, so it is sent nothing: the link was cut. */
  | 'input-closed'
  /** The far end is not reading what it is sent (busy, or stuck): this message was refused, not sent; the link stays. */
  | 'backlogged';

export class TransportError extends Error {
  readonly code: TransportErrorCode;

  constructor(code: TransportErrorCode, message: string) {
    super(message);
    this.name = 'TransportError';
    this.code = code;
  }
}

/**
 * One link that carries JSON-RPC messages, shared by both edges: the client side (an HTTP session)
 * and the upstream side (a child's stdio, a remote server). Callbacks flow back towards whoever owns
 * the link. Only what every link has belongs here; what one kind of link adds stays on its class.
 */
export interface Transport {
  start(): Promise<void>;
  /**
   * Resolves once the message is handed over. The initialize handshake's last message
   * (notifications/initialized) resolves once the link can receive everything the peer may send on
   * its own (Streamable HTTP: its GET stream is open), so a ready session misses nothing.
   */
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  /**
   * The request will get no response (it was cancelled): whatever the link holds for one (an HTTP
   * response waiting for its answers) can go. Links that keep nothing per request leave it out.
   */
  release?(requestId: RequestId): void;
  close(): Promise<void>;
  /**
   * `extra.relatedRequestId`: the request (in this link's own id space) whose stream carried the
   * message, when the transport knows it (Streamable HTTP does; stdio cannot).
   */
  onmessage?: (message: JsonRpcMessage, extra?: MessageExtra) => void;
  /**
   * An answer came that the link could not hand on (over its size limit, so unread): only the request it
   * answers (`requestId`, in this link's own id space) fails, with `error`; the link stays up. Links that
   * fail such a request otherwise (its send does, over Streamable HTTP) leave it unset.
   */
  onanswerlost?: (requestId: RequestId, error: Error) => void;
  /** `reason`: why the link closed, when it was for a reason the owner should hear (not a plain exit). */
  onclose?: (reason?: TransportError) => void;
  onerror?: (error: Error) => void;
  /**
   * Set by the link's owner: the link refuses every request from now on, though it is up (a process whose
   * token was renewed, see checkedRequests): requests go to a new link, while this one finishes the calls
   * it carries. Links that never do so leave it unset; one whose owner does not set it closes instead.
   */
  onreplaced?: () => void;
  /**
   * Set by the link's owner: a tool's definition as the upstream listed it, for links that mirror
   * arguments into headers (Mcp-Param-* to a 2026-07-28 HTTP upstream). Others ignore it.
   */
  toolDefinition?: ((name: string) => Readonly<Record<string, unknown>> | undefined) | undefined;
}
