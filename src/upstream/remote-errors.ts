import { TransportError } from '../transport/transport.js';

/** The upstream no longer knows our MCP session (HTTP 404): re-initialize. */
export function sessionExpired(upstream: string): TransportError {
  return new TransportError('session-expired', `upstream "${upstream}" no longer knows the gateway's session (HTTP 404); re-initializing`);
}

export class UpstreamHttpError extends Error {
  readonly status: number;
  constructor(upstream: string, status: number, detail: string) {
    super(`upstream "${upstream}" answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'UpstreamHttpError';
    this.status = status;
  }
}
