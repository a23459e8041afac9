import { clipped } from './clipped.js';
import { DEFAULT_ATTRIBUTE_VALUE_LENGTH } from './tracing-options.js';
import { withoutPassword } from './uri-password.js';

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
  /** The meta-tool a call came through (call_tool): the span is named after the tool it runs. */
  metaTool: 'switchboard.meta_tool',
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

/**
 * The longest method, tool or prompt name a span carries, in its name and attributes. They are the
 * client's (the span starts before routing, so an unknown one too): uncut, a client could make every
 * span as large as its request body, and the export queue bounds spans by count, not bytes. The SDK's
 * attribute limit cuts no span name, and keeps its cut attribute as a view into the whole value. MCP
 * names are at most 128 characters (SEP-986); a longer one is cut here and marked.
 */
const MAX_TARGET = 256;
const target = (name: string): string => clipped(name, MAX_TARGET);

/** A client's JSON-RPC request id as jsonrpc.request.id: a string id is the client's, of any length, so cut as a name is. */
export const requestIdAttribute = (id: string | number): string => target(String(id));

/** The span name the conventions ask for: "{mcp.method.name} {target}", the target a tool or prompt name. */
export function mcpSpanName(method: string, params: Record<string, unknown> | undefined): string {
  if (method === 'tools/call' || method === 'prompts/get') {
    const name = params?.name;
    if (typeof name === 'string') return `${method} ${target(name)}`;
  }
  return target(method);
}

/** The JSON-RPC codes' standard names: what a span's status says of an error (see statusText). */
const CODE_NAMES: Readonly<Record<number, string>> = {
  [-32700]: 'Parse error',
  [-32600]: 'Invalid Request',
  [-32601]: 'Method not found',
  [-32602]: 'Invalid params',
  [-32603]: 'Internal error',
};

/**
 * A failed span's status description: the gateway's error code (SWB_…) or the JSON-RPC code's standard
 * name, never the error's message. Messages quote what the client sent (an argument rule names the
 * refused value, an unknown tool its name) or name the tenant (a limit), and upstreams' messages echo
 * arguments: recorded, they would put arguments and principals into traces that the conventions and
 * tracing.recordPrincipal keep out of them.
 */
export function statusText(code: number, gatewayCode?: string): string {
  return gatewayCode ?? CODE_NAMES[code] ?? (code <= -32000 && code >= -32099 ? 'Server error' : `error ${code}`);
}

/** The attributes every MCP span of a request carries that follow from the request itself. */
export function requestAttributes(method: string, params: Record<string, unknown> | undefined): Record<string, string | undefined> {
  const a: Record<string, string | undefined> = { [ATTR.mcpMethod]: target(method) };
  const name = typeof params?.name === 'string' ? target(params.name) : undefined;
  if (method === 'tools/call') {
    a[ATTR.toolName] = name;
    a[ATTR.operationName] = 'execute_tool';
  } else if (method === 'prompts/get') {
    a[ATTR.promptName] = name;
  } else if (typeof params?.uri === 'string' && (method === 'resources/read' || method === 'resources/subscribe' || method === 'resources/unsubscribe')) {
    // Cut here too: the SDK's own cut at its attribute limit would keep the whole URI alive (see MAX_TARGET).
    a[ATTR.mcpResourceUri] = clipped(withoutPassword(params.uri), DEFAULT_ATTRIBUTE_VALUE_LENGTH);
  }
  return a;
}
