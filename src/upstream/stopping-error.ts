import { GatewayError } from '../errors.js';

/**
 * What a call cut by a deliberate stop of its instance hears: the gateway stopping, a pool a reload retired
 * (the upstream replaced or removed), or a per-session instance a reload took from its session (released
 * after the drain's grace). No crash of the upstream's, nothing a retry on that instance would mend; the
 * client may retry. A session's own end also releases its instances, but it cancels its calls first: they
 * hear SWB_SESSION_CLOSED, never this.
 */
export function stoppingError(upstream: string): GatewayError {
  return new GatewayError('SWB_SHUTTING_DOWN', `upstream "${upstream}" is stopping (the gateway is shutting down, or a config reload replaced or removed it); retry`, { upstream });
}
