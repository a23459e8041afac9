// The Vercel AI SDK's MCP client (`createMCPClient` from @ai-sdk/mcp), driven without a model: list and
// call tools, answer an elicitation. It needs Node 22, so it runs in a driver process on Node 22+
// (drivers/ai-sdk.mjs). By default it probes server/discover and speaks 2026-07-28 statelessly (the
// elicitation then arrives as an input_required round); with protocolVersionDiscovery off it opens a
// 2025 session; over /sse it speaks 2024-11-05.
import { join } from 'node:path';
import { nodeAtLeast } from '../helpers/node-binary.mjs';
import { ANSWERS, clientSuite, textOf } from './client-suite.js';
import { LineDriver } from './line-driver.js';
import { MATRIX, ROOT } from './matrix.js';

clientSuite(MATRIX.aiSdk, async (transport, qs) => {
  const options = {
    url: `${qs.base}/${transport === 'sse' ? 'sse' : 'mcp'}`,
    token: qs.token(),
    transport: transport === 'sse' ? 'sse' : 'http',
    discovery: transport === 'modern',
    elicited: ANSWERS.elicited,
  };
  const driver = new LineDriver(nodeAtLeast(22), join(import.meta.dirname, 'drivers', 'ai-sdk.mjs'), [JSON.stringify(options)], ROOT);
  const { protocolVersion } = await driver.ready();
  const modern = protocolVersion === '2026-07-28';
  if (modern !== (transport === 'modern')) throw new Error(`unexpected protocol version ${String(protocolVersion)} over ${transport}`);
  return {
    listTools: () => driver.call<string[]>('listTools'),
    callTool: async (name, args = {}) => textOf(await driver.call('callTool', { name, args })),
    close: () => driver.close(),
  };
});
