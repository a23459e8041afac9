import { GatewayError } from '../errors.js';
import { methodSpec } from '../jsonrpc/methods.js';

/**
 * Why a failed request is sent once more: 'unsent', it never left or was not taken (the user's consent
 * changed, see ConsentPin; refused for a session the upstream forgot), so any request may go again;
 * 'lost', the upstream lost its session or restarted underneath it, and only an idempotent request goes
 * again (a retry changes nothing). undefined: it is not sent again.
 */
export function retryOf(method: string, err: unknown): 'unsent' | 'lost' | undefined {
  if (!(err instanceof GatewayError)) return undefined;
  if (err.details?.unsent === true) return 'unsent';
  const lost = err.code === 'SWB_UPSTREAM_SESSION_EXPIRED' || err.code === 'SWB_UPSTREAM_CRASHED';
  return lost && methodSpec(method)?.idempotent === true ? 'lost' : undefined;
}
