// One subject's 2026-07-28 requests share a standing on the endpoint (its instance leases, its limits), but
// each request is judged by the scopes of its own token; so is each request of a 2025 session whose
// requests come with different tokens of its subject. Two tokens of one subject (a narrow one handed to
// a less trusted agent, a wide one in another client) send requests at once: the narrow token's list,
// filtered after its upstream answered, must not be filtered by the scopes of the wide token's request
// that arrived meanwhile.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { startSdkUpstream, type SdkUpstream } from '../helpers/sdk-http-upstream.js';
import { ISSUER, PUBLIC_URL, makeKey, mcpRequest, openSession, signToken } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const TOOLS = [
  { name: 'public', description: 'Anyone of the tenant may call it.', inputSchema: { type: 'object' as const, properties: {} } },
  { name: 'secret', description: 'Only with the admin scope.', inputSchema: { type: 'object' as const, properties: {} } },
];

describe('2026-07-28 requests of one subject with tokens of different scopes', () => {
  let dir: string;
  let gw: RunningGateway;
  let upstream: SdkUpstream;
  /** The next tools/list the upstream answers waits for this, when set. */
  let gate: { opened: Promise<void>; open: () => void; arrived: boolean } | undefined;
  let narrow: string;
  let wide: string;

  before(async () => {
    upstream = await startSdkUpstream((s) => {
      s.server.registerCapabilities({ tools: { listChanged: true } });
      s.server.setRequestHandler(ListToolsRequestSchema, async () => {
        const g = gate;
        gate = undefined;
        if (g) {
          g.arrived = true;
          await g.opened;
        }
        return { tools: TOOLS };
      });
    });
    dir = mkdtempSync(join(tmpdir(), 'swb-scopes-'));
    const key = await makeKey('k1');
    writeFileSync(join(dir, 'key.pem'), key.spki);
    narrow = await signToken(key, { aud: PUBLIC_URL, kid: null, scope: 'tools:read' });
    wide = await signToken(key, { aud: PUBLIC_URL, kid: null, scope: 'tools:read admin' });
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      pinning: { mode: 'off' },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [join(dir, 'key.pem')] },
      tenants: [{ name: 'acme', endpoints: ['/mcp'], tools: { allow: ['up__public', { match: 'up__secret', scopes: ['admin'] }] } }],
      upstreams: [{ name: 'up', transport: 'streamable-http', url: upstream.url, era: 'legacy', sharing: 'shared', pool: { size: 1 }, healthCheck: { intervalMs: 0 } }],
      endpoints: [{ path: '/mcp', upstreams: ['up'] }],
    });
  });

  after(async () => {
    await gw?.close();
    upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The next tools/list the upstream gets waits until `open()`; `arrived` says it got there. */
  const holdNextList = () => {
    let open!: () => void;
    gate = { opened: new Promise<void>((r) => (open = r)), open: () => open(), arrived: false };
    return gate;
  };
  const names = (a: { body: any }) => (a.body.result?.tools ?? []).map((t: { name: string }) => t.name).sort();

  it('each token sees the list its own scopes allow, alone', async () => {
    assert.deepEqual(names(await modernPost(gw.url(), 'tools/list', {}, { token: narrow })), ['public']);
    assert.deepEqual(names(await modernPost(gw.url(), 'tools/list', {}, { token: wide })), ['public', 'secret']);
  });

  it("a narrow token's list is not filtered by the scopes of a wide token's request that came while it was upstream", async () => {
    const held = holdNextList();
    const narrowList = modernPost(gw.url(), 'tools/list', {}, { token: narrow });
    await until('the narrow list to reach the upstream', () => held.arrived, 10_000);
    // The wide token's request is served in full while the narrow one waits upstream.
    assert.deepEqual(names(await modernPost(gw.url(), 'tools/list', {}, { token: wide })), ['public', 'secret']);
    held.open();
    assert.deepEqual(names(await narrowList), ['public'], 'the narrow token never sees the tool its scopes do not allow');
  });

  it("a narrow token's call is refused even while the wide token's requests come and go", async () => {
    const held = holdNextList();
    const wideList = modernPost(gw.url(), 'tools/list', {}, { token: wide });
    await until('the wide list to reach the upstream', () => held.arrived, 10_000);
    const call = await modernPost(gw.url(), 'tools/call', { name: 'secret', arguments: {} }, { token: narrow });
    held.open();
    assert.ok(call.body.error, `the narrow token's call of the admin tool is refused: ${JSON.stringify(call.body)}`);
    assert.deepEqual(names(await wideList), ['public', 'secret'], "the wide token's list is its own");
  });

  it('a 2025 session: a request is judged by the token of the POST that carried it', async () => {
    const sid = await openSession(gw, wide);
    const list = (id: number, token: string) => mcpRequest(gw, { jsonrpc: '2.0', id, method: 'tools/list' }, { token, sid });
    const held = holdNextList();
    const narrowList = list(11, narrow);
    await until('the narrow list to reach the upstream', () => held.arrived, 10_000);
    const wideList = await list(12, wide);
    assert.deepEqual(names({ body: wideList.json }), ['public', 'secret']);
    held.open();
    assert.deepEqual(names({ body: (await narrowList).json }), ['public'], 'the narrow token never sees the tool its scopes do not allow');
  });
});
