#!/usr/bin/env node
// A dependency-free demo MCP server over stdio (newline-delimited JSON-RPC), shipped in the image at
// /app/examples/echo-server.mjs so that the image's default config, the Helm chart's default values,
// the plain Kubernetes manifests and the compose stack have an upstream that works out of the box.
// Replace it with your own upstreams. Tools: echo (returns its message) and add (sums two numbers).
import { createInterface } from 'node:readline';

const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const TOOLS = [
  {
    name: 'echo',
    description: 'Returns the message it was given.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    annotations: { readOnlyHint: true },
  },
];

const send = (msg) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) });

function call(name, args = {}) {
  if (name === 'echo') return typeof args.message === 'string' ? text(args.message) : text('message must be a string', true);
  if (name === 'add') {
    return typeof args.a === 'number' && typeof args.b === 'number' ? text(String(args.a + args.b)) : text('a and b must be numbers', true);
  }
  return null;
}

function handle(msg) {
  if (typeof msg !== 'object' || msg === null || typeof msg.method !== 'string' || msg.id === undefined) return; // notifications, responses
  const { id, method, params = {} } = msg;
  switch (method) {
    case 'initialize':
      return send({
        id,
        result: {
          protocolVersion: VERSIONS.includes(params.protocolVersion) ? params.protocolVersion : VERSIONS[1],
          capabilities: { tools: {} },
          serverInfo: { name: 'switchboard-demo-echo', version: '1.0.0' },
        },
      });
    case 'ping':
      return send({ id, result: {} });
    case 'tools/list':
      return send({ id, result: { tools: TOOLS } });
    case 'tools/call': {
      const result = call(params.name, params.arguments);
      return result ? send({ id, result }) : send({ id, error: { code: -32602, message: `Tool ${params.name} not found` } });
    }
    default:
      return send({ id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
}

createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (line) => {
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return send({ id: null, error: { code: -32700, message: 'Parse error' } });
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) handle(m);
  })
  .on('close', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
