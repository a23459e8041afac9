import { GatewayError } from '../errors.js';
import { throttledStart } from './remote-errors.js';
import { awaitsUser } from './upstream-user.js';

/** What an instance that is not ready tells a call (UpstreamInstance satisfies it). */
export interface DownInstance {
  readonly config: { readonly name: string };
  readonly state: string;
  readonly lastFailure: string | undefined;
  readonly lastError: GatewayError | undefined;
  readonly incompatible: boolean;
  startThrottling(): GatewayError | undefined;
}

/** A failed start as its coded error: a throttled one says when to retry; an uncoded one is UNAVAILABLE, with why. */
export function startFailureOf(upstream: string, err: Error): GatewayError {
  const throttled = throttledStart(upstream, err);
  if (throttled) return throttled;
  if (err instanceof GatewayError) return err;
  return new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${upstream}" failed to start: ${err.message}`, { upstream });
}

/**
 * Why a call to an instance that is not ready fails. The start that just failed says why (a sandbox that
 * cannot be built, a crash at start-up). Throttled: when to retry, as a throttled call is told. Neither era
 * works: say so, not "restarting" (a restart will not change the upstream's protocol). A refused credential
 * or a consent awaited: that error, as it came.
 */
export function downError(instance: DownInstance): GatewayError {
  const name = instance.config.name;
  const throttled = instance.startThrottling();
  if (throttled) return throttled;
  if (instance.incompatible) return new GatewayError('SWB_UPSTREAM_PROTOCOL', instance.lastFailure!, { upstream: name, incompatible: true });
  const last = instance.lastError;
  if (last && (last.code === 'SWB_UPSTREAM_CREDENTIAL_REFUSED' || awaitsUser(last))) return last;
  const why = instance.lastFailure ? `: ${instance.lastFailure}` : '';
  return new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${name}" is unavailable (${instance.state})${why}; retry shortly`, { upstream: name });
}
