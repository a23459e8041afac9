// Drives the Vercel AI SDK's MCP client (@ai-sdk/mcp, Node 22+) for test/clients/ai-sdk.test.ts, in a
// process of its own so it runs on the Node it requires. argv[2]: JSON {url, token, transport: 'http' |
// 'sse', discovery: boolean, elicited: object}. Prints {ready, protocolVersion} once connected, then
// answers each stdin line {id, op, params} with {id, result} or {id, error}; stdin's end closes the client.
import { createInterface } from 'node:readline';
import { ElicitationRequestSchema, createMCPClient } from '@ai-sdk/mcp';

const o = JSON.parse(process.argv[2]);
const write = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);

const client = await createMCPClient({
  transport: { type: o.transport, url: o.url, headers: { Authorization: `Bearer ${o.token}` } },
  // true: probe server/discover and speak 2026-07-28 where the server does (the default); false: initialize.
  protocolVersionDiscovery: o.discovery,
  capabilities: { elicitation: {} },
});
client.onElicitationRequest(ElicitationRequestSchema, async () => ({ action: 'accept', content: o.elicited }));

const ops = {
  listTools: async () => (await client.listTools()).tools.map((t) => t.name),
  callTool: ({ name, args }) => client.callTool({ name, arguments: args }),
};

write({ ready: true, protocolVersion: client.initializeResult.protocolVersion });
for await (const line of createInterface({ input: process.stdin })) {
  const { id, op, params } = JSON.parse(line);
  try {
    write({ id, result: await ops[op](params) });
  } catch (err) {
    write({ id, error: String(err?.message ?? err) });
  }
}
await client.close();
