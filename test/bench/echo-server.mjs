#!/usr/bin/env node
// The cheapest MCP server we can write: raw newline-delimited JSON-RPC on stdin/stdout, no SDK, no
// validation beyond what answering needs. It exists so that the benchmark measures what sits in front
// of it (a gateway, or the SDK client for the direct floor) rather than the upstream.
const SUPPORTED = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const TOOL = {
  name: 'echo',
  description: 'Returns its message unchanged',
  inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
};

function answer(msg) {
  switch (msg.method) {
    case 'initialize': {
      const asked = msg.params?.protocolVersion;
      return {
        protocolVersion: SUPPORTED.includes(asked) ? asked : SUPPORTED[0],
        capabilities: { tools: {} },
        serverInfo: { name: 'bench-echo', version: '1.0.0' },
      };
    }
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: [TOOL] };
    case 'tools/call':
      if (msg.params?.name !== 'echo') return undefined;
      return { content: [{ type: 'text', text: String(msg.params.arguments?.message ?? '') }] };
    default:
      return undefined;
  }
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let out = '';
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.trim() === '') continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      continue;
    }
    // Notifications and responses need no answer.
    if (msg.id === undefined || msg.id === null || typeof msg.method !== 'string') continue;
    const result = answer(msg);
    out +=
      result === undefined
        ? `${JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } })}\n`
        : `${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result })}\n`;
  }
  // One write per chunk read: answers that arrived together leave together.
  if (out) process.stdout.write(out);
});
process.stdin.on('end', () => process.exit(0));
