// A gateway whose upstreams ask the user things (elicitation/create, a 2026-07-28 input round, a -32042),
// and an SDK client that records every question it is put and declines it: the rig of the tests of what
// reaches the user of an upstream's question. The test keeps `lines` and `asked` and reads them.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { startGateway, type RunningGateway } from './gateway.js';
import { connectClient } from './sdk.js';

type Json = Record<string, any>;
const STDIO = { transport: 'stdio' as const, command: process.execPath, sandbox: 'none' as const, sharing: 'shared' as const };
const RECORDING = 'test/fixtures/params-recording-server.mjs';

/** The params-recording fixture as a 2025 upstream ("legacy") and a 2026-07-28 one ("modern"). */
export const RECORDING_UPSTREAMS = [
  { name: 'legacy', ...STDIO, args: [RECORDING] },
  { name: 'modern', ...STDIO, args: [RECORDING, '--modern'], era: 'modern' as const },
];
/** The stdio URL-elicitation fixture ("url"). */
export const URL_UPSTREAM = { name: 'url', ...STDIO, args: ['test/fixtures/url-elicitation-server.mjs'] };

export interface AskedGatewayOptions {
  /** With the URL fixture too ("url", first on /mcp). */
  url?: boolean;
  /** More of the config (server.publicUrl, pinning, …). */
  config?: Partial<ConfigInput>;
  /** A client of URL and form elicitation named so; without it, connectClient's (form only, sampling, roots). */
  urlClient?: string;
  lines: string[];
  asked: Json[];
}

/** Starts the gateway (/mcp on the upstreams) with its log lines kept in `lines`, and connects the client. */
export async function startAskedGateway(o: AskedGatewayOptions): Promise<{ gw: RunningGateway; client: Client }> {
  const upstreams = o.url ? [URL_UPSTREAM, ...RECORDING_UPSTREAMS] : RECORDING_UPSTREAMS;
  const gw = await startGateway(
    { ...o.config, upstreams, endpoints: [{ path: '/mcp', upstreams: upstreams.map((u) => u.name) }] },
    { logLines: o.lines },
  );
  let client: Client;
  if (o.urlClient === undefined) {
    client = await connectClient(gw, 'streamable-http');
    client.setRequestHandler(ElicitRequestSchema, async (req) => declined(o.asked, req.params));
  } else {
    client = new Client({ name: o.urlClient, version: '1.0.0' }, { capabilities: { elicitation: { form: {}, url: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async (req) => declined(o.asked, req.params));
    await client.connect(new StreamableHTTPClientTransport(gw.url()));
  }
  return { gw, client };
}

function declined(asked: Json[], params: Json): { action: 'decline' } {
  asked.push(params);
  return { action: 'decline' };
}
