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
  /** 2026-07-28: a mirrored header (Mcp-Method, Mcp-Name, Mcp-Param-*, MCP-Protocol-Version) is missing, malformed or differs from the body. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request's declared client capabilities lack one the server needs to serve it. */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the protocol version in `_meta` is not one the server speaks. */
  UnsupportedProtocolVersion: -32022,
} as const;
