// A Streamable HTTP transport's waits (before its GET stream is opened again, up to 30 s; before a call's
// stream is resumed, as long as the upstream's retry: says) end when it is closed: they held the transport
// and all it reaches, and the process, that long after it was closed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { ClientCredentials } from '../../../src/upstream/client-credentials.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { getStreamUpstream, remoteConfig } from '../../helpers/get-stream-upstream.js';
import { until } from '../../helpers/wait.js';

/** Settles with `value` after `ms`: the bound of a race against something that should settle much sooner. */
const guard = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(r, ms, value).unref());

describe('a closed Streamable HTTP transport does not sleep on (found by a review)', () => {
  it("a call's stream waiting out the upstream's retry: (60 s) before its resume: the send ends when the transport closes", async () => {
    // The call's stream brings one event (id 1, retry: 60000) and breaks: a resume is due in 60 s.
    const server = createServer((req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's' });
      res.write('id: 1\nretry: 60000\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\n', () => res.socket?.destroy());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const agent = new Agent();
    const cfg = { name: 'u', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, headers: {}, http: { headersTimeoutMs: 5000, bodyTimeoutMs: 5000, maxMessageBytes: 64 * 1024 } } as unknown as RemoteUpstreamConfig;
    let broke = false;
    const logger = createLogger('debug', { write: (line: string) => void (broke ||= line.includes('upstream SSE stream broke')) });
    const t = new StreamableHttpClientTransport(cfg, agent, undefined, logger);
    try {
      const sent = t.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } }).then(() => 'ended', () => 'ended');
      await until('the stream broke, its resume due in 60 s', () => broke);
      await new Promise((r) => setImmediate(r));
      await t.close();
      assert.equal(await Promise.race([sent, guard(5000, 'still waiting')]), 'ended');
    } finally {
      server.closeAllConnections();
      server.close();
      await agent.close();
    }
  });

  it('the GET stream waiting to be opened again: the process exits once the transport is closed', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/get-wait-child.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(child, 'exit').then(() => 'exited');
    try {
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b));
      await until('the child closed its transport while it waited', () => out.includes('closed'), 30_000);
      // Nothing is left to keep it: it exits now, not once the 4 s wait is over.
      assert.equal(await Promise.race([exited, guard(2500, 'still running')]), 'exited');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe("a closing Streamable HTTP transport whose session DELETE waits for a token (found by a review)", () => {
  it('the close (and the instance hearing of it) waits a bounded time, and the DELETE still goes once the token comes', async () => {
    // The token endpoint answers the first request and holds the next (the DELETE's, once t1 was refused).
    const held: Array<import('node:http').ServerResponse> = [];
    let tokens = 0;
    const tokenServer = createServer((req, res) => {
      req.resume();
      if (tokens++ === 0) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t1","token_type":"Bearer","expires_in":0}');
      held.push(res);
    });
    tokenServer.listen(0, '127.0.0.1');
    await once(tokenServer, 'listening');
    const deletes: Array<string | undefined> = [];
    const { server, url } = await getStreamUpstream((_req, res) => void res.writeHead(405).end());
    server.prependListener('request', (req) => void (req.method === 'DELETE' && deletes.push(req.headers.authorization)));
    const agent = new Agent();
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 5000);
    const t = new StreamableHttpClientTransport(remoteConfig(url), agent, cc, createLogger('silent'));
    let closed = false;
    t.onclose = () => void (closed = true);
    try {
      await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      // A token is kept at least 30 s whatever its expires_in: refused (as a 401 does), the next request fetches one.
      cc.invalidate('t1');
      const closing = t.close().then(() => 'closed');
      await until('the DELETE asked for its token', () => held.length === 1);
      // Before: it waited as long as the authorization server held the token (here: for good).
      assert.equal(await Promise.race([closing, guard(10_000, 'still closing')]), 'closed');
      assert.equal(closed, true);
      held[0]!.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t2","token_type":"Bearer","expires_in":0}');
      await until('the DELETE went with the token that came late', () => deletes.length === 1);
      assert.deepEqual(deletes, ['Bearer t2']);
    } finally {
      for (const r of held) r.destroy();
      server.closeAllConnections();
      server.close();
      tokenServer.closeAllConnections();
      tokenServer.close();
      await agent.close();
    }
  });
});
