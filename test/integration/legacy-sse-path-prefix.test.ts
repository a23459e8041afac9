// A gateway served under a path of its public URL (server.publicUrl http://127.0.0.1:PORT/mcp-gw, a reverse
// proxy passing /mcp-gw/... on without the prefix, as the consent pages already support). A legacy HTTP+SSE
// client connects to <publicUrl>/sse, and the endpoint event must name a URL the proxy takes to the gateway:
// it named /messages?sessionId=..., which the client resolves to http://127.0.0.1:PORT/messages, outside the
// prefix, so every POST of every legacy client behind such a proxy was answered by something else (404).
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';

const PREFIX = '/mcp-gw';

/** The reverse proxy: /mcp-gw/... goes to the gateway without the prefix, anything else is not found. */
function startProxy(target: () => URL): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith(`${PREFIX}/`)) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not the gateway');
    const to = target();
    const out = request({ host: to.hostname, port: to.port, method: req.method, path: url.slice(PREFIX.length), headers: { ...req.headers, host: to.host } }, (back) => {
      res.writeHead(back.statusCode ?? 502, back.headers);
      back.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

describe('legacy HTTP+SSE: a gateway served under a path prefix of its public URL', { timeout: 60_000 }, () => {
  let proxy: { server: Server; base: string };
  let gw: RunningGateway;
  let client: Client | undefined;

  before(async () => {
    proxy = await startProxy(() => new URL(gw.base));
    gw = await startGateway({
      server: { publicUrl: `${proxy.base}${PREFIX}` },
      upstreams: [{ name: 'conf', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['conf'] }],
    });
  });

  after(async () => {
    await client?.close().catch(() => {});
    await gw?.close();
    proxy?.server.closeAllConnections();
    await new Promise((resolve) => proxy?.server.close(resolve));
  });

  it("the endpoint event names the messages path under the prefix, and the SDK client's calls work through the proxy", async () => {
    const transport = new SSEClientTransport(new URL(`${proxy.base}${PREFIX}/sse`));
    client = new Client({ name: 'prefixed', version: '1.0.0' });
    await client.connect(transport);
    const endpoint = (transport as unknown as { _endpoint?: URL })._endpoint;
    assert.equal(endpoint?.pathname, `${PREFIX}/messages`);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'test_simple_text'), JSON.stringify(tools.tools.map((t) => t.name)));
  });
});
