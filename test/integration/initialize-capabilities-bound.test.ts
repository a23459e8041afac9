// A client's initialize capabilities are kept for the session's life: in memory, and with Redis in the
// session record every replica reads. Only the body limit (server.maxBodyBytes, 4 MB) bounded them, so
// every session could put megabytes into the store. Beyond 16 KiB as JSON they are now refused with
// -32602 Invalid params naming the bound, and no session is opened; real clients declare a few hundred
// bytes. (clientInfo was bounded already: its known string fields, 256 characters each.) Real gateway
// on a real port, raw POSTs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { RAW_INIT, rawPost } from '../helpers/raw-mcp.js';

const initWith = (capabilities: unknown) => ({ ...RAW_INIT, params: { ...RAW_INIT.params, capabilities } });

describe("initialize's capabilities are bounded", { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({ upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }], endpoints: [{ path: '/mcp', upstreams: ['fx'] }] });
  });
  after(async () => gw?.close());

  it('capabilities of 1 MB as JSON are refused with -32602 naming the bound, and no session opens', async () => {
    const answer = await rawPost(gw.base, initWith({ experimental: { blob: 'x'.repeat(1024 * 1024) } }));
    assert.equal(answer.sid, null, 'no session id');
    const body = JSON.parse(answer.text);
    assert.equal(body.error?.code, -32602, answer.text);
    assert.match(body.error.message, /capabilities/);
    assert.match(body.error.message, /16384 bytes/);
    assert.equal(gw.app.gateway.registry.list().length, 0, 'no session is held');
  });

  it('capabilities just under the bound open a session', async () => {
    const answer = await rawPost(gw.base, initWith({ roots: { listChanged: true }, experimental: { blob: 'x'.repeat(16 * 1024 - 100) } }));
    assert.equal(answer.status, 200, answer.text);
    assert.ok(answer.sid, 'a session id');
    assert.ok(JSON.parse(answer.text.replace(/^[\s\S]*?data: /, '').split('\n')[0] ?? answer.text).result, answer.text);
  });
});
