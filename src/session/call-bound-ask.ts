import { Cancellation } from '../jsonrpc/cancellation.js';

/**
 * Puts a question to the client for one of its calls (`call`, when it is still in flight), withdrawn when
 * either side gives up: the upstream that asked (`signal`), or the client cancelling the call it is asked
 * for. The upstream may not cancel its question then (the SDK's servers do not), and the client would be
 * left with a question nobody waits for, answered into nothing.
 */
export function callBoundAsk<T>(signal: Cancellation, call: Cancellation | undefined, ask: (signal: Cancellation) => Promise<T>): Promise<T> {
  if (!call) return ask(signal);
  const either = new Cancellation();
  const upstream = () => either.abort(signal.reason);
  const client = () => either.abort('the client cancelled the request this was asked for');
  signal.onAbort(upstream);
  call.onAbort(client);
  if (signal.aborted || call.aborted) either.abort(signal.reason ?? call.reason);
  return ask(either).finally(() => (signal.offAbort(upstream), call.offAbort(client)));
}
