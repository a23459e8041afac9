/**
 * Attribute names of the OpenTelemetry semantic conventions the gateway's spans use: MCP
 * (gen-ai/mcp.md, status Development), GenAI tool execution, JSON-RPC, error, network. Written out
 * rather than imported from the conventions package's incubating entry point, as the conventions
 * advise for attributes not yet stable; the gateway's own are under `switchboard.`.
 */
export const ATTR = {
  mcpMethod: 'mcp.method.name',
  mcpSession: 'mcp.session.id',
  mcpProtocolVersion: 'mcp.protocol.version',
  mcpResourceUri: 'mcp.resource.uri',
  jsonrpcRequestId: 'jsonrpc.request.id',
  rpcStatusCode: 'rpc.response.status_code',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
  operationName: 'gen_ai.operation.name',
  errorType: 'error.type',
  networkTransport: 'network.transport',
  networkProtocol: 'network.protocol.name',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  userId: 'user.id',
  tenant: 'switchboard.tenant',
  endpoint: 'switchboard.endpoint',
  era: 'switchboard.era',
  errorCode: 'switchboard.error.code',
  upstream: 'switchboard.upstream.name',
  upstreamInstance: 'switchboard.upstream.instance',
  upstreamTransport: 'switchboard.upstream.transport',
  upstreamEra: 'switchboard.upstream.era',
  processPid: 'process.pid',
  httpMethod: 'http.request.method',
  forwardOwner: 'switchboard.forward.owner',
  forwardOutcome: 'switchboard.forward.outcome',
} as const;

/** The span name the conventions ask for: "{mcp.method.name} {target}", the target a tool or prompt name. */
export function mcpSpanName(method: string, params: Record<string, unknown> | undefined): string {
  if (method === 'tools/call' || method === 'prompts/get') {
    const name = params?.name;
    if (typeof name === 'string') return `${method} ${name}`;
  }
  return method;
}

/** The attributes every MCP span of a request carries that follow from the request itself. */
export function requestAttributes(method: string, params: Record<string, unknown> | undefined): Record<string, string | undefined> {
  const a: Record<string, string | undefined> = { [ATTR.mcpMethod]: method };
  const name = typeof params?.name === 'string' ? params.name : undefined;
  if (method === 'tools/call') {
    a[ATTR.toolName] = name;
    a[ATTR.operationName] = 'execute_tool';
  } else if (method === 'prompts/get') {
    a[ATTR.promptName] = name;
  } else if (typeof params?.uri === 'string' && (method === 'resources/read' || method === 'resources/subscribe' || method === 'resources/unsubscribe')) {
    a[ATTR.mcpResourceUri] = params.uri;
  }
  return a;
}
