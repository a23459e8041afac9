import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';

/** One question an upstream put to the client (elicitation, sampling, roots), held until a retry answers it. */
export interface HeldAsk {
  readonly method: string;
  readonly params: Record<string, unknown> | undefined;
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (err: Error) => void;
}

/**
 * Refuses every question still held, and forgets them: nothing will answer them any more (the client's
 * request ended, or the upstream answered its call). Each refusal is the upstream's JSON-RPC error at once;
 * left held, its request hung until its own timeout.
 */
export function refuseHeld(asks: Map<string, HeldAsk>, why: string): void {
  if (asks.size === 0) return;
  for (const a of asks.values()) a.reject(new JsonRpcError(ErrorCode.InternalError, why));
  asks.clear();
}
