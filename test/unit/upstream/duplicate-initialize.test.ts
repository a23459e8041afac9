// A remote upstream that answers initialize twice (a batch holding two answers with its id, or the answer
// replayed on its GET stream): the gateway negotiated the first, but the transport took the protocol version of
// each, the last one winning, and sent it on every later request as MCP-Protocol-Version: a version the session
// never agreed (a server checking it refused every call with 400, counted as unreachable). Now the first answer's
// version stays; the duplicate is ignored, with a warning. A real loopback server, the real pool.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { legacyHttpPool } from '../../helpers/legacy-http-upstream.js';
import { testCaller } from '../../helpers/sdk-http-upstream.js';

const initResult = (protocolVersion: string) => ({ protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'u', version: '1' } });

describe('a duplicate initialize answer from a remote upstream', () => {
  it('does not replace the negotiated protocol version on later requests', async () => {
    const versions: Array<string | undefined> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        if (req.method === 'DELETE') return void res.writeHead(200).end();
        if (req.method === 'GET') return void res.writeHead(405).end();
        const m = JSON.parse(body) as { id?: number; method: string };
        if (m.method === 'initialize') {
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' });
          return void res.end(JSON.stringify([
            { jsonrpc: '2.0', id: m.id, result: initResult('2025-06-18') },
            { jsonrpc: '2.0', id: m.id, result: initResult('2025-03-26') },
          ]));
        }
        if (m.id === undefined) return void res.writeHead(202).end();
        versions.push(req.headers['mcp-protocol-version'] as string | undefined);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [] } }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const gw = await legacyHttpPool(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    try {
      assert.equal(gw.instance.identity?.protocolVersion, '2025-06-18');
      await gw.instance.request('tools/call', { name: 'x', arguments: {} }, { caller: testCaller });
      assert.deepEqual(versions, ['2025-06-18']);
    } finally {
      await gw.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
