/** The upstream no longer knows our MCP session (HTTP 404): re-initialize. */
export class SessionExpiredError extends Error {
  constructor(upstream: string) {
    super(`upstream "${upstream}" no longer knows the gateway's session (HTTP 404); re-initializing`);
    this.name = 'SessionExpiredError';
  }
}

export class UpstreamHttpError extends Error {
  readonly status: number;
  constructor(upstream: string, status: number, detail: string) {
    super(`upstream "${upstream}" answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'UpstreamHttpError';
    this.status = status;
  }
}
