/** node:http's deadlines for a request, as every listener of the gateway (MCP, admin, metrics) applies them. */
export interface HttpDeadlines {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
}

/**
 * Complete headers within headersTimeoutMs of the accept (server.headersTimeoutMs), the whole request
 * within requestTimeoutMs (server.bodyTimeoutMs); node stops timing a request once its body is in, so a
 * response (an SSE stream) is not limited. Node's defaults kept a silent connection 60 s and checked only
 * every 30 s: the check runs here at a quarter of the headers deadline (100 ms to 1 s), so a deadline is
 * kept to within that. One function so that no listener is left on node's defaults or drifts from the rest.
 */
export function httpDeadlines(headersTimeoutMs: number, requestTimeoutMs: number): HttpDeadlines {
  return {
    headersTimeout: headersTimeoutMs,
    // node refuses a request deadline shorter than the headers one (the config's check keeps it so).
    requestTimeout: Math.max(headersTimeoutMs, requestTimeoutMs),
    connectionsCheckingInterval: Math.max(100, Math.min(1000, headersTimeoutMs / 4)),
  };
}
