// Many calls in flight when a remote upstream forgets its session all wait for the one re-initialize:
// each waits on the instance's 'ready' and its halt signal, a listener each, which is the design; Node's
// "possible memory leak" warning past ten listeners would be a false alarm in the operator's log.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';

const CALLS = 30;
const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} };

describe('calls waiting for a re-initialize', () => {
  it(`${CALLS} calls refused for a forgotten session are all answered, and Node warns of no listener leak`, async () => {
    let inits = 0;
    let held: Array<{ res: ServerResponse; id: number }> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        if (req.method === 'DELETE') return void res.writeHead(200).end();
        if (req.method === 'GET') return void res.writeHead(405).end();
        const m = JSON.parse(body) as { id?: number; method?: string };
        if (m.method === 'initialize') {
          inits++;
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `s${inits}` });
          return void res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } } }));
        }
        if (m.id === undefined) return void res.writeHead(202).end();
        if (req.headers['mcp-session-id'] === 's1') {
          // The first session: every call is held, then all are refused at once (the server restarted).
          held.push({ res, id: m.id });
          if (held.length === CALLS) for (const h of held.splice(0)) h.res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [] } }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'streamable-http', url, era: 'legacy', healthCheck: { intervalMs: 0 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    const agent = new Agent();
    const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), (u, log) => new StreamableHttpClientTransport(u as RemoteUpstreamConfig, agent, undefined, log));
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      await pool.start();
      const inst = [...pool.instances][0]!;
      const answers = await Promise.all(Array.from({ length: CALLS }, () => inst.request('tools/list', {}, { caller: caller as never })));
      assert.equal(answers.length, CALLS);
      assert.ok(answers.every((a) => Array.isArray((a as { tools?: unknown }).tools)));
      assert.ok(inits >= 2, `re-initialized (${inits} initialize requests)`);
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')), []);
    } finally {
      process.off('warning', onWarning);
      held = [];
      await pool.close();
      await agent.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
