// The client request path over real HTTP: which method names are served at all (the method table), and
// (below) the lifecycle rule and internal errors. The gateway fronts the small recording fixture over
// stdio, with auth off.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SessionGuard } from '../../src/policy/session-guard.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, mcpRequest } from '../helpers/tokens.js';

const RECORDING = { command: process.execPath, args: ['test/fixtures/recording-server.mjs'], sandbox: 'none' as const };

function config(session: Record<string, unknown> = {}) {
  return {
    session,
    upstreams: [{ name: 'rec', transport: 'stdio' as const, ...RECORDING, sharing: 'shared' as const }],
    endpoints: [{ path: '/mcp', upstreams: ['rec'] }],
  };
}

async function initialize(gw: RunningGateway): Promise<string> {
  const init = await mcpRequest(gw, initializeBody());
  assert.equal(init.status, 200, init.text);
  return init.headers.get('mcp-session-id')!;
}

async function openSession(gw: RunningGateway): Promise<string> {
  const sid = await initialize(gw);
  const ack = await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid });
  assert.equal(ack.status, 202, ack.text);
  return sid;
}

describe('method names', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway(config());
  });
  after(() => gw.close());

  // Found by an adversarial review: a plain-object method table answered these with its prototype,
  // 200 {"result":{"undefined":[]}}.
  for (const method of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
    it(`"${method}" is answered -32601 Method not found, like any unknown method`, async () => {
      const sid = await openSession(gw);
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 7, method, params: { cursor: undefined } }, { sid });
      assert.equal(r.json?.id, 7, r.text);
      assert.equal(r.json?.result, undefined, r.text);
      assert.equal(r.json?.error?.code, -32601, r.text);
    });
  }

  it('a method only a server sends (sampling/createMessage) is not served to a client either', async () => {
    const sid = await openSession(gw);
    const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 8, method: 'sampling/createMessage', params: {} }, { sid });
    assert.equal(r.json?.error?.code, -32601, r.text);
  });
});

describe('lifecycle: requests before notifications/initialized', () => {
  let held: RunningGateway;
  let quick: RunningGateway;
  before(async () => {
    // One gateway that would hold a request far longer than any test runs, one that gives up at once.
    [held, quick] = await Promise.all([startGateway(config({ initializedWaitMs: 60_000 })), startGateway(config({ initializedWaitMs: 0 }))]);
  });
  after(() => Promise.all([held.close(), quick.close()]));

  it('a request with no notifications/initialized to follow is refused with -32600 naming what to send', async () => {
    const sid = await initialize(quick);
    const r = await mcpRequest(quick, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { sid });
    assert.equal(r.json?.error?.code, -32600, r.text);
    assert.match(r.json?.error?.message, /notifications\/initialized/);
    // Pings stay allowed, and once the client says it is initialized the same request is served.
    assert.deepEqual((await mcpRequest(quick, { jsonrpc: '2.0', id: 3, method: 'ping' }, { sid })).json?.result, {});
    assert.equal((await mcpRequest(quick, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
    assert.ok(Array.isArray((await mcpRequest(quick, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { sid })).json?.result?.tools));
  });

  it('a request that overtakes notifications/initialized (another connection) is held until it arrives, then served', async () => {
    const sid = await initialize(held);
    // fetch resolves on the response headers: the gateway has the request, and cannot answer it yet.
    const early = await fetch(held.url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'early', method: 'tools/list' }),
      signal: AbortSignal.timeout(30_000),
    });
    assert.equal(early.status, 200);
    assert.equal((await mcpRequest(held, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
    const text = await early.text();
    const answer = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((m) => m.id === 'early');
    assert.ok(Array.isArray(answer?.result?.tools), text);
  });
});

describe('internal errors', () => {
  let gw: RunningGateway;
  const lines: string[] = [];
  before(async () => {
    gw = await startGateway(config(), { logLines: lines });
  });
  after(() => gw.close());

  /** The log lines (JSON) at error level that carry this incident id. */
  const incidentLines = (incident: string) =>
    lines.map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.level === 50 && l.incident === incident);

  it('a plain Error in the route (an injected fault) is answered -32603 with an incident id the error log also has', async () => {
    const sid = await openSession(gw);
    const pool = gw.app.gateway.pools.get('rec')!;
    const instanceFor = pool.instanceFor;
    pool.instanceFor = () => {
      throw new Error('injected fault: no instance today');
    };
    try {
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { sid });
      assert.equal(r.json?.error?.code, -32603, r.text);
      const incident = r.json?.error?.data?.incident;
      assert.match(String(incident), /^[0-9a-f-]{36}$/, r.text);
      assert.ok(!r.text.includes('injected fault'), 'the cause stays in the log');
      const logged = incidentLines(incident);
      assert.equal(logged.length, 1, `one error line for the incident:\n${lines.join('\n')}`);
      assert.equal(logged[0]!.err.message, 'injected fault: no instance today');
      assert.match(logged[0]!.err.stack, /injected fault/);
    } finally {
      pool.instanceFor = instanceFor;
    }
  });

  it('a stage that throws still gets the client an answer, logged the same way', async () => {
    const sid = await openSession(gw);
    // Every guard's: a request runs with a guard of its own token's (SessionGuard.as), not the session's.
    const check = SessionGuard.prototype.check;
    SessionGuard.prototype.check = () => {
      throw new TypeError('injected fault in a stage');
    };
    try {
      const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'calls' } }, { sid });
      assert.equal(r.json?.error?.code, -32603, r.text);
      const logged = incidentLines(r.json?.error?.data?.incident);
      assert.equal(logged.length, 1);
      assert.equal(logged[0]!.err.type, 'TypeError');
    } finally {
      SessionGuard.prototype.check = check;
    }
  });
});
