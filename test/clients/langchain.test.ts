// LangChain's MCP adapters (`MultiServerMCPClient` from @langchain/mcp-adapters), driven without a model:
// load the server's tools as LangChain tools and invoke them, with the adapter's onProgress hook. The
// adapter declares no client capabilities, so no server request can reach it.
import type { StructuredToolInterface } from '@langchain/core/tools';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { clientSuite } from './client-suite.js';
import { MATRIX } from './matrix.js';

clientSuite(MATRIX.langchain, async (transport, qs) => {
  let progress: number[] = [];
  const client = new MultiServerMCPClient({
    mcpServers: {
      quickstart: {
        transport: transport === 'sse' ? 'sse' : 'http',
        url: `${qs.base}/${transport === 'sse' ? 'sse' : 'mcp'}`,
        headers: { Authorization: `Bearer ${qs.token()}` },
        // Over /mcp it must not quietly fall back to /sse: each transport is tested on its own.
        automaticSSEFallback: false,
      },
    },
    onProgress: (p) => void progress.push(p.progress),
  });
  const tools = await client.getTools();
  const tool = (name: string): StructuredToolInterface => {
    const t = tools.find((x) => x.name === name);
    if (!t) throw new Error(`no LangChain tool ${name}`);
    return t;
  };
  // A tool's text result comes back as the string content of the tool message.
  const invoke = async (name: string, args: Record<string, unknown>) => String(await tool(name).invoke(args));
  return {
    listTools: async () => (await client.getTools()).map((t) => t.name),
    callTool: (name, args = {}) => invoke(name, args),
    callWithProgress: async (name, args) => {
      progress = [];
      const text = await invoke(name, args);
      return { text, progress };
    },
    close: () => client.close(),
  };
});
