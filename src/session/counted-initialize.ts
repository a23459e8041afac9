import type { JsonRpcResponse } from '../jsonrpc/types.js';
import type { SessionObserver } from './session-observer.js';

/**
 * An initialize, counted in the request metrics as its own method (the method table labels it), answered
 * or refused. Both transports call the session's initialize directly or from the lifecycle stage, before
 * the observe stage: without this a refused session start (its upstream's pool exhausted, its upstream
 * down, bad params) was in no request metric at all.
 */
export async function countedInitialize(observer: SessionObserver, endpoint: string, run: () => Promise<JsonRpcResponse>): Promise<JsonRpcResponse> {
  const t0 = performance.now();
  const response = await run();
  const outcome = 'error' in response ? 'error' : 'ok';
  observer.requestDone({ method: 'initialize', endpoint, upstream: 'none', outcome, seconds: (performance.now() - t0) / 1000, tool: undefined, era: 'legacy' });
  return response;
}
