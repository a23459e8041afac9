import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { waitFor, withClockAhead } from '../helpers/wait.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function initialize(gw: RunningGateway, clientInfo: Record<string, unknown> = { name: 't', version: '1' }): Promise<string> {
  const res = await fetch(gw.url(), {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo } }),
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

describe('a client-sized clientInfo (found by a review)', () => {
  it('is logged and kept in the session record bounded: known fields, each cut, the rest left out', async () => {
    const logLines: string[] = [];
    const gw = await startGateway({ upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }], endpoints: [{ path: '/mcp', upstreams: ['fx'] }] }, { logLines });
    try {
      const sid = await initialize(gw, { name: `n${'n'.repeat(100_000)}`, version: '1.2.3', title: 'Client', junk: 'j'.repeat(100_000), icons: [{ src: 'x'.repeat(50_000) }] });
      const record = gw.app.gateway.registry.get(sid)!.record();
      const kept = JSON.stringify(record.clientInfo);
      assert.ok(kept.length <= 2000, `the record keeps a clientInfo of ${kept.length} characters`);
      assert.equal(record.clientInfo?.version, '1.2.3');
      assert.equal(record.clientInfo?.title, 'Client');
      assert.match(String(record.clientInfo?.name), /^nnnn.*…$/);
      assert.equal(record.clientInfo?.junk, undefined);
      const logged = logLines.find((l) => l.includes('"session initialized"'));
      assert.ok(logged, 'the session was logged');
      assert.ok(logged.length <= 3000, `a log line of ${logged.length} characters`);
    } finally {
      await gw.close();
    }
  });
});
