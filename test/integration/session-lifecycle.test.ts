import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { waitFor, withClockAhead } from '../helpers/wait.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function initialize(gw: RunningGateway): Promise<string> {
  const res = await fetch(gw.url(), {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
  assert.equal(res.status, 200);
  await res.text();
  const sid = res.headers.get('mcp-session-id')!;
  const note = await fetch(gw.url(), {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  assert.equal(note.status, 202);
  return sid;
}

describe('session lifecycle', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      server: { keepAliveMs: 1000 },
      session: { idleTimeoutMs: 1000 },
      upstreams: [everythingUpstream('everything', 'per-session', { pool: { size: 1, warm: 0, max: 10 } })],
      endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
    });
  });
  after(() => gw?.close());

  it('moves UNINITIALIZED → INITIALIZING → ACTIVE', async () => {
    const sid = await initialize(gw);
    assert.equal(gw.app.gateway.registry.get(sid)?.state, 'ACTIVE');
  });

  it('ends an idle session, releasing its per-session process, and then answers 404', async () => {
    const sid = await initialize(gw);
    const pool = gw.app.gateway.pools.get('everything')!;
    const session = gw.app.gateway.registry.get(sid)!;
    const inst = [...pool.instances].find((i) => i.dedicatedTo === session)!;
    assert.ok(inst);
    // Idle past idleTimeoutMs: the clock moves instead of the test waiting it out; the sweep runs on its timer.
    await withClockAhead(1050, () => waitFor(() => !gw.app.gateway.registry.get(sid), { timeoutMs: 4000 }));
    assert.equal(gw.app.gateway.registry.get(sid), undefined, 'session ended after idleTimeoutMs');
    assert.equal(inst.state, 'stopped');
    const res = await fetch(gw.url(), {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': sid },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    });
    assert.equal(res.status, 404);
    await res.text();
  });

  it('keeps a session with an open stream alive and sends keep-alive comments on it', async () => {
    const sid = await initialize(gw);
    const ac = new AbortController();
    const res = await fetch(gw.url(), { headers: { accept: 'text/event-stream', 'mcp-session-id': sid }, signal: ac.signal });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const reader = res.body!.getReader();
    let text = '';
    const deadline = Date.now() + 2500;
    while (!text.includes(': keepalive') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    assert.match(text, /: keepalive\n\n/);
    assert.ok(gw.app.gateway.registry.get(sid), 'not reaped while its stream is open');
    ac.abort();
  });
});
