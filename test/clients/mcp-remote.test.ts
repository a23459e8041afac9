// mcp-remote, the stdio bridge that desktop clients (Claude Desktop and others) start to reach a remote
// server, spawned as they start it: `mcp-remote URL --header "Authorization: Bearer …"`. The test is the
// desktop client: it speaks MCP over the bridge's stdin/stdout with the SDK's stdio client, declaring
// sampling and elicitation. mcp-remote runs OAuth discovery before connecting (the RFC 9728 metadata
// must name URL issuers only); its state directory is a temporary one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ANSWERS, clientSuite, textOf } from './client-suite.js';
import { MATRIX, ROOT } from './matrix.js';

const BRIDGE = join(ROOT, 'node_modules', 'mcp-remote', 'dist', 'proxy.js');

clientSuite(MATRIX.mcpRemote, async (transport, qs) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'swb-mcp-remote-'));
  const url = `${qs.base}/${transport === 'sse' ? 'sse' : 'mcp'}`;
  const bridge = new StdioClientTransport({
    command: process.execPath,
    args: [BRIDGE, url, '--header', `Authorization: Bearer ${qs.token()}`, '--transport', transport === 'sse' ? 'sse-only' : 'http-only'],
    env: { PATH: process.env.PATH ?? '', HOME: stateDir, MCP_REMOTE_CONFIG_DIR: stateDir },
    // mcp-remote logs to stderr; kept out of the test's output, read on failure.
    stderr: 'pipe',
  });
  let log = '';
  bridge.stderr?.on('data', (b: Buffer) => {
    log = (log + b.toString()).slice(-20_000);
  });
  const client = new Client({ name: 'desktop-client', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: ANSWERS.sampled } }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { ...ANSWERS.elicited } }));
  try {
    await client.connect(bridge);
  } catch (err) {
    throw new Error(`mcp-remote did not connect: ${(err as Error).message}\n${log}`);
  }
  return {
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    callTool: async (name, args = {}) => textOf(await client.callTool({ name, arguments: args })),
    callWithProgress: async (name, args) => {
      const progress: number[] = [];
      const result = await client.callTool({ name, arguments: args }, undefined, { onprogress: (p) => progress.push(p.progress) });
      return { text: textOf(result), progress };
    },
    close: async () => {
      await client.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
});
