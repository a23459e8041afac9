import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { ATTR, statusText } from '../observability/trace-attributes.js';
import type { TraceSpan, Tracing } from '../observability/tracing.js';

type Result = Record<string, unknown>;

/** The actions an elicitation answer has (ElicitResult); anything else the client wrote is recorded as _OTHER. */
const ACTIONS: ReadonlySet<unknown> = new Set(['accept', 'decline', 'cancel']);

/**
 * A request the gateway sends to its client (an upstream's elicitation, sampling or roots request it
 * relays, or a confirmation rule's question) as a CLIENT span, child of the client's request that
 * caused it: a trace then shows how long the call waited on the client (often on a person). `parent`
 * is that request's span; without one (tracing off, or the request is not traced) nothing is recorded.
 * The question and the answer are never recorded, only the method and the outcome.
 */
export function tracedClientRequest(tracing: Tracing, parent: TraceSpan | undefined, method: string, sessionId: string, send: () => Promise<Result>): Promise<Result> {
  const span = parent && parent.run(() => tracing.client(method, { [ATTR.mcpMethod]: method, [ATTR.mcpSession]: sessionId, [ATTR.networkTransport]: 'tcp' }));
  if (!span) return send();
  return send().then(
    (result) => {
      // An elicitation the user declined or cancelled is an answer, not a failure: its action is recorded.
      // The client's own string otherwise, of any size (the SDK's cut would keep all of it alive in the export queue).
      const action = (result as { action?: unknown }).action;
      if (typeof action === 'string') span.set({ 'mcp.elicitation.action': ACTIONS.has(action) ? action : '_OTHER' });
      span.end();
      return result;
    },
    (err: unknown) => {
      if (err instanceof JsonRpcError) span.set({ [ATTR.rpcStatusCode]: String(err.code) });
      // The code, not the message: a client's error text is the client's (see statusText).
      span.end(err instanceof JsonRpcError ? { type: String(err.code), message: statusText(err.code) } : { type: '_OTHER', message: 'internal error' });
      throw err;
    },
  );
}
