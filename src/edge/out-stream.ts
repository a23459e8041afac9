import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage, RequestId } from '../jsonrpc/types.js';
import type { Held, HoldOwner } from './answer-holds.js';
import type { SseConnection } from './sse-connection.js';

/** A logical outgoing stream: the standalone GET stream (no 0) or one POST's response stream. */
export interface OutStream extends Held {
  no: number;
  seq: number;
  conn: SseConnection | undefined;
  /** Requests of this POST still owed a response; empty for the standalone stream. */
  pending: Set<RequestId>;
  /**
   * JSON mode, or auto mode still holding: the HTTP response waiting for every answer of its POST.
   * `held`: auto mode, held in the hub's AnswerHolds until its hold runs out (or the first message that
   * is not an answer), when it becomes a stream.
   */
  json: { res: ServerResponse; headers: Record<string, string>; batch: boolean; out: JsonRpcMessage[]; held: boolean } | undefined;
  /**
   * Standalone stream: the last event a connection's socket took, so a new GET gets what it missed
   * (not the last one written: what a cut stream still held for its socket never went out).
   */
  delivered: number;
  /** Whether any of its events went into the event log (so retiring it has a log to drop). */
  logged: boolean;
  /** A POST stream whose last answer went to a live reader, unlogged: that answer (see the transport's #keepAnswered). */
  final: string | undefined;
}

/** A new stream of `holder`'s session (every one made here: one shape for V8 on the hot path). */
export function outStream(holder: HoldOwner, no: number, pending: readonly RequestId[]): OutStream {
  return { holder, holdTicket: 0, holdSlot: 0, no, seq: 0, conn: undefined, pending: new Set(pending), json: undefined, delivered: 0, logged: false, final: undefined };
}
