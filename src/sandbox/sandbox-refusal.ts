import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors.js';

/**
 * What a client hears when an upstream cannot start in its sandbox: its own name and an incident id,
 * nothing else. The reason (bubblewrap's own words, the host's paths and user ids) is for the operator:
 * `reason` is never put on the wire, and the caller logs it with the same incident id.
 */
export class SandboxRefusal extends GatewayError {
  readonly incident: string;
  readonly reason: string;

  constructor(upstream: string, cause: unknown) {
    const incident = randomBytes(6).toString('hex');
    super('SWB_SANDBOX_UNAVAILABLE', `upstream "${upstream}" could not start in its sandbox (incident ${incident}); an operator can find the reason in the gateway's log`, { upstream, incident });
    this.incident = incident;
    this.reason = cause instanceof Error ? cause.message : String(cause);
  }
}
