// A POST whose `_meta` names a protocol version the gateway does not serve per request (a 2025 revision,
// which has no per-request version, or a later one) was held to 2026-07-28's own rules before its version was
// looked at: without 2026-07-28's clientCapabilities it got -32602 "clientCapabilities is required", without
// its Mcp-Method header -32020, never the -32022 that names the versions served, which the spec requires for a
// version the server does not implement and which is what tells the client which version to use. Found by a
// review: once MCP-Protocol-Version is present and matches the body, the version is checked first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';

const V = '2026-07-28';
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
let nextId = 1;

/** One POST with `_meta` naming `version` and the given headers (no Mcp-Method unless given). */
async function post(gw: RunningGateway, version: string, meta: Record<string, unknown>, headers: Record<string, string>): Promise<{ status: number; body: any; id: number }> {
  const id = nextId++;
  const res = await fetch(gw.url(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: { [VERSION_KEY]: version, ...meta } } }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, id };
}

describe('a request whose _meta names a version not served per request', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw?.close());

  /** 400 -32022 with the versions served and the one named, and the request id. */
  function assertUnsupported(a: { status: number; body: any; id: number }, requested: string): void {
    assert.equal(a.status, 400, JSON.stringify(a.body));
    assert.equal(a.body?.error?.code, -32022, JSON.stringify(a.body));
    assert.deepEqual(a.body.error.data, { supported: [V], requested });
    assert.equal(a.body.id, a.id);
  }

  for (const version of ['2025-06-18', '2025-11-25', '2027-01-01']) {
    it(`${version}: -32022 naming the versions served, whatever 2026-07-28's other fields and headers`, async () => {
      const full = { 'io.modelcontextprotocol/clientCapabilities': {} };
      assertUnsupported(await post(gw, version, full, { 'mcp-protocol-version': version, 'mcp-method': 'tools/list' }), version);
      assertUnsupported(await post(gw, version, {}, { 'mcp-protocol-version': version, 'mcp-method': 'tools/list' }), version);
      assertUnsupported(await post(gw, version, full, { 'mcp-protocol-version': version }), version);
      assertUnsupported(await post(gw, version, {}, { 'mcp-protocol-version': version }), version);
    });
  }

  it('MCP-Protocol-Version absent or not the body\'s is still -32020, and 2026-07-28\'s own rules hold for it', async () => {
    const absent = await post(gw, '2025-06-18', {}, {});
    assert.deepEqual([absent.status, absent.body?.error?.code], [400, -32020], JSON.stringify(absent.body));
    const other = await post(gw, '2025-06-18', {}, { 'mcp-protocol-version': V, 'mcp-method': 'tools/list' });
    assert.deepEqual([other.status, other.body?.error?.code], [400, -32020], JSON.stringify(other.body));
    const noCaps = await post(gw, V, {}, { 'mcp-protocol-version': V, 'mcp-method': 'tools/list' });
    assert.deepEqual([noCaps.status, noCaps.body?.error?.code], [400, -32602], JSON.stringify(noCaps.body));
    const noMethod = await post(gw, V, { 'io.modelcontextprotocol/clientCapabilities': {} }, { 'mcp-protocol-version': V });
    assert.deepEqual([noMethod.status, noMethod.body?.error?.code], [400, -32020], JSON.stringify(noMethod.body));
  });
});
