// mcp-remote, the stdio bridge that desktop clients (Claude Desktop and others) start to reach a remote
// server, spawned as they start it: `mcp-remote URL --header "Authorization: Bearer …"`. The test is the
// desktop client: it speaks MCP over the bridge's stdin/stdout with the SDK's stdio client, declaring
// sampling and elicitation. mcp-remote runs OAuth discovery before connecting (the RFC 9728 metadata
// must name URL issuers only); its state directory is a temporary one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { clientSuite } from './client-suite.js';
import { MATRIX, ROOT } from './matrix.js';
import { sdkV1Client } from './sdk-v1-client.js';

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
  const client = await sdkV1Client('desktop-client', bridge, (err) => new Error(`mcp-remote did not connect: ${err.message}\n${log}`));
  return {
    ...client,
    close: async () => {
      await client.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
});
