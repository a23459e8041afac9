// Stands in for a gateway that dies: starts one stdio upstream through the real transport factory, writes
// the server's first message (a line of JSON) to its own stdout, and waits to be killed.
// Usage: node --import tsx limits-parent.ts <upstream config as JSON>
import { parseConfig } from '../../src/config/load.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/types.js';
import { createLogger } from '../../src/observability/logger.js';
import { UpstreamTransports } from '../../src/upstream/transport-factory.js';

const upstream = JSON.parse(process.argv[2]!) as { name: string };
const config = parseConfig({ upstreams: [upstream], endpoints: [{ path: '/mcp', upstreams: [upstream.name] }] }, 'test', {}, '/');
const t = new UpstreamTransports().create(config.upstreams[0]!, createLogger('silent'));
t.onmessage = (m: JsonRpcMessage) => process.stdout.write(`${JSON.stringify((m as { params: unknown }).params)}\n`);
await t.start();
setInterval(() => {}, 60_000);
