// The official TypeScript SDK 1.x client, as an application embeds it: the README's example, with
// sampling and elicitation handlers, over Streamable HTTP and the legacy HTTP+SSE transport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ANSWERS, clientSuite, textOf } from './client-suite.js';
import { MATRIX } from './matrix.js';

clientSuite(MATRIX.sdkV1, async (transport, qs) => {
  const client = new Client({ name: 'client-matrix', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: ANSWERS.sampled } }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { ...ANSWERS.elicited } }));
  const requestInit = { headers: { Authorization: `Bearer ${qs.token()}` } };
  await client.connect(
    transport === 'sse' ? new SSEClientTransport(new URL(`${qs.base}/sse`), { requestInit }) : new StreamableHTTPClientTransport(new URL(`${qs.base}/mcp`), { requestInit }),
  );
  return {
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    callTool: async (name, args = {}) => textOf(await client.callTool({ name, arguments: args })),
    callWithProgress: async (name, args) => {
      const progress: number[] = [];
      const result = await client.callTool({ name, arguments: args }, undefined, { onprogress: (p) => progress.push(p.progress) });
      return { text: textOf(result), progress };
    },
    close: () => client.close(),
  };
});
