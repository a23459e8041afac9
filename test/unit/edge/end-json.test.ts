import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { endJson } from '../../../src/edge/replies.js';

/** What each request's path asks endJson to write: status, headers and body. */
const CASES: Record<string, { status: number; headers: Record<string, string>; body: string }> = {
  '/session': { status: 200, headers: { 'mcp-session-id': 'abc' }, body: '{"jsonrpc":"2.0","id":1,"result":{"é":"ü"}}' },
  '/none': { status: 429, headers: {}, body: '{}' },
  '/own-type': { status: 401, headers: { 'www-authenticate': 'Bearer', 'content-type': 'text/plain', 'content-length': '1' }, body: '{"error":1}' },
};

describe('a whole JSON answer (endJson)', () => {
  let server: Server;
  let base: string;
  before(async () => {
    server = createServer((req, res) => {
      const c = CASES[req.url!]!;
      endJson(res, c.status, c.headers, c.body);
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('goes out with the caller\'s headers, its own type and its length in bytes, in one body', async () => {
    const res = await fetch(`${base}/session`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('mcp-session-id'), 'abc');
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(CASES['/session']!.body)));
    assert.equal(res.headers.get('transfer-encoding'), null);
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 1, result: { é: 'ü' } });
    const none = await fetch(`${base}/none`);
    assert.equal(none.status, 429);
    assert.equal(await none.text(), '{}');
  });

  it('a type or length the caller gave is replaced, not sent twice', async () => {
    const res = await fetch(`${base}/own-type`);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    // fetch joins repeated headers with ", ": one value each means one header each.
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('content-length'), '11');
    assert.equal(await res.text(), '{"error":1}');
  });
});
