import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { RunningGateway } from './gateway.js';

export type ClientTransportKind = 'streamable-http' | 'sse';

/** An official SDK client connected to the gateway, with sampling, elicitation and roots answered by the test. */
export async function connectClient(gw: RunningGateway, kind: ClientTransportKind, opts: { path?: string; name?: string } = {}): Promise<Client> {
  const client = new Client(
    { name: opts.name ?? 'switchboard-test', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    model: 'test-model',
    role: 'assistant',
    content: { type: 'text', text: `sampled: ${JSON.stringify(req.params.messages[0]?.content)}` },
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada', check: true } }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///workspace', name: 'workspace' }] }));
  const path = opts.path ?? '/mcp';
  const transport =
    kind === 'streamable-http'
      ? new StreamableHTTPClientTransport(gw.url(path))
      : new SSEClientTransport(gw.url(path === '/mcp' ? '/sse' : `${path}/sse`));
  await client.connect(transport);
  return client;
}

export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}

/** The JSON-RPC error a request through the SDK client was refused with (a test failure if it succeeds or fails otherwise). */
export async function mcpRefusal(run: () => Promise<unknown>): Promise<McpError> {
  let caught: unknown;
  await run().then(
    () => {
      throw new Error('the request should have been refused');
    },
    (err) => (caught = err),
  );
  if (!(caught instanceof McpError)) throw new Error(`refused with no JSON-RPC error: ${String(caught)}`);
  return caught;
}
