// The official TypeScript SDK 2.x client (`npm i @modelcontextprotocol/client`): a 2025 session over
// Streamable HTTP (its default, versionNegotiation 'legacy') and over HTTP+SSE, and pinned to 2026-07-28,
// where the server's sampling and elicitation requests arrive as input_required rounds that the same
// handlers answer.
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ANSWERS, clientSuite, textOf } from './client-suite.js';
import { MATRIX } from './matrix.js';

clientSuite(MATRIX.sdkV2, async (transport, qs) => {
  const client = new Client(
    { name: 'client-matrix', version: '1.0.0' },
    {
      capabilities: { sampling: {}, elicitation: { form: {} } },
      ...(transport === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
    },
  );
  client.setRequestHandler('sampling/createMessage', async () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: ANSWERS.sampled } }));
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { ...ANSWERS.elicited } }));
  const requestInit = { headers: { Authorization: `Bearer ${qs.token()}` } };
  await client.connect(
    transport === 'sse' ? new SSEClientTransport(new URL(`${qs.base}/sse`), { requestInit }) : new StreamableHTTPClientTransport(new URL(`${qs.base}/mcp`), { requestInit }),
  );
  const expected = transport === 'modern' ? 'modern' : 'legacy';
  if (client.getProtocolEra() !== expected) throw new Error(`expected the ${expected} era, the client negotiated ${client.getProtocolEra()}`);
  return {
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    callTool: async (name, args = {}) => textOf(await client.callTool({ name, arguments: args })),
    callWithProgress: async (name, args) => {
      const progress: number[] = [];
      const result = await client.callTool({ name, arguments: args }, { onprogress: (p) => progress.push(p.progress) });
      return { text: textOf(result), progress };
    },
    close: () => client.close(),
  };
});
