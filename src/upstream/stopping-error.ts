import { GatewayError } from '../errors.js';

/**
 * What a call cut by a deliberate stop of its instance hears (the gateway stopping, or a pool a reload
 * retired): no crash of the upstream's, nothing a retry on that instance would mend; the client may retry.
 */
export function stoppingError(upstream: string): GatewayError {
  return new GatewayError('SWB_SHUTTING_DOWN', `upstream "${upstream}" is stopping (the gateway is shutting down, or a config reload replaced it); retry`, { upstream });
}
