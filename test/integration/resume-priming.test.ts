// A resumed stream (GET + Last-Event-ID) of a 2025-11-25 session starts, like any SSE stream the gateway
// starts for such a client, with a priming event (spec 2025-11-25, Streamable HTTP: "when a server starts an
// SSE stream, it MUST immediately send an event with an id and empty data"). The official client keeps the
// id to resume from per stream it reads: a resumed stream that dropped again before its first event (a long
// call, nothing new yet; a flaky network) was reconnected WITHOUT Last-Event-ID, which opened (or was refused
// 409 as) the standalone stream, and the call's answer, logged on its own stream, never reached the client.
// The test plays the flaky network with a proxy that cuts the call's POST stream after its priming event and
// the first resume after its first bytes (the priming event now; a keep-alive comment before).
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { textOf } from '../helpers/sdk.js';

/** What the proxy saw of the client's requests, in order. */
interface Seen {
  method: string;
  lastEventId: string | undefined;
  cut: boolean;
}

/**
 * A proxy to the gateway that drops the connection of (a) the POST carrying the tools/call once its first
 * event with an id has passed, and (b) the first GET with Last-Event-ID once its first bytes have passed.
 */
function startFlakyProxy(target: () => URL, seen: Seen[]): Promise<{ server: Server; url: URL }> {
  let resumes = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const lastEventId = req.headers['last-event-id'] as string | undefined;
      const entry: Seen = { method: req.method!, lastEventId, cut: false };
      seen.push(entry);
      const isCall = req.method === 'POST' && body.toString().includes('"tools/call"');
      const isFirstResume = req.method === 'GET' && lastEventId !== undefined && resumes++ === 0;
      const to = target();
      const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (back: IncomingMessage) => {
        res.writeHead(back.statusCode ?? 502, back.headers);
        back.on('data', (chunk: Buffer) => {
          res.write(chunk);
          const cut = isCall ? /^id: /m.test(chunk.toString()) : isFirstResume;
          if (cut && !entry.cut) {
            entry.cut = true;
            // Both sides go, as when a network path dies: the client sees its stream fail mid-way.
            setImmediate(() => (res.destroy(), back.destroy(), out.destroy()));
          }
        });
        back.on('end', () => res.end());
        back.on('error', () => res.destroy());
      });
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      out.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`) })));
}

describe('a resumed stream of a 2025-11-25 session opens with a priming event', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let proxy: { server: Server; url: URL };
  let client: Client | undefined;
  const seen: Seen[] = [];

  before(async () => {
    proxy = await startFlakyProxy(() => new URL(gw.base), seen);
    gw = await startGateway({
      // Keep-alive comments every second: before the fix, the first bytes of the quiet resumed stream.
      server: { keepAliveMs: 1000, responseMode: 'sse' },
      upstreams: [everythingUpstream('everything', 'shared')],
      endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
    });
  });

  after(async () => {
    await client?.close().catch(() => {});
    await gw?.close();
    proxy?.server.closeAllConnections();
    await new Promise((resolve) => proxy?.server.close(resolve));
  });

  it("the client's second resume still names the call's stream, and the answer arrives", async () => {
    const transport = new StreamableHTTPClientTransport(proxy.url);
    client = new Client({ name: 'flaky', version: '1.0.0' });
    await client.connect(transport);
    assert.equal(transport.protocolVersion, '2025-11-25');
    // No progress token: nothing goes on the call's stream between its priming event and its answer.
    const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 4, steps: 1 } }, undefined, { timeout: 20_000 });
    assert.match(textOf(result), /Long running operation completed/);
    const resumes = seen.filter((s) => s.method === 'GET' && s.lastEventId !== undefined);
    assert.ok(resumes.length >= 2, `two resumes: ${JSON.stringify(seen)}`);
    assert.equal(resumes[0]!.cut, true);
    // Both name the call's stream from its priming event on (none falls back to a GET without Last-Event-ID).
    const stream = resumes[0]!.lastEventId!.split('_')[0];
    assert.equal(resumes[1]!.lastEventId!.split('_')[0], stream, JSON.stringify(seen));
  });
});
