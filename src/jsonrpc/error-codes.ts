/** Wire error codes. The standard ones from JSON-RPC 2.0, then MCP's and the SDK's conventions. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The SDK's code for a request that ran out of time; clients know it. */
  RequestTimeout: -32001,
  /** Upstream unavailable / gateway-side failure, in the implementation-defined server range. */
  ServerError: -32000,
  ResourceNotFound: -32002,
  UrlElicitationRequired: -32042,
} as const;
