// The SDK 1.x client as the matrix drives it: both the embedded SDK and the desktop client behind
// mcp-remote are this client (with sampling and elicitation handlers); only the transport differs.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ANSWERS, textOf, type MatrixClient } from './client-suite.js';

/** A connected SDK 1.x client over `transport`, as a matrix client; `connectFailed` explains a failed connect. */
export async function sdkV1Client(name: string, transport: Transport, connectFailed?: (err: Error) => Error): Promise<MatrixClient> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: ANSWERS.sampled } }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { ...ANSWERS.elicited } }));
  try {
    await client.connect(transport);
  } catch (err) {
    throw connectFailed ? connectFailed(err as Error) : err;
  }
  return {
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    callTool: async (tool, args = {}) => textOf(await client.callTool({ name: tool, arguments: args })),
    callWithProgress: async (tool, args) => {
      const progress: number[] = [];
      const result = await client.callTool({ name: tool, arguments: args }, undefined, { onprogress: (p) => progress.push(p.progress) });
      return { text: textOf(result), progress };
    },
    close: () => client.close(),
  };
}
