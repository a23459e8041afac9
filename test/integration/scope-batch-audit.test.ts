// A 2025-03-26 batch refused at the edge with HTTP 403 insufficient_scope is refused whole: none of its
// requests is handled. Each audited request of it gets its denial line, as each of a batch the request rate
// refuses does (README, Audit log): before, only the first request lacking a scope had one, so a second call
// to a scoped tool in the same batch, and the other calls refused with it, left no trace. A real gateway on a
// real port in front of the conformance stdio server; JWT auth, test_elicitation allowed only with scope "ask".
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post, type Json } from '../helpers/http-edge.js';
import { ISSUER, PUBLIC_URL, makeKey, signToken } from '../helpers/tokens.js';

describe('a batch refused for a missing scope', { timeout: 60_000 }, () => {
  let dir: string;
  let gw: RunningGateway;
  let narrow: string;
  const logLines: string[] = [];
  const audited = (): Json[] => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-scope-batch-'));
    const key = await makeKey('k1');
    writeFileSync(join(dir, 'key.pem'), key.spki);
    narrow = await signToken(key, { aud: PUBLIC_URL, kid: null, scope: 'tools:read', sub: 'ada' });
    gw = await startGateway(
      {
        server: { publicUrl: PUBLIC_URL },
        audit: { enabled: true },
        auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [join(dir, 'key.pem')] },
        tenants: [{ name: 'acme', endpoints: ['/mcp'], tools: { allow: [{ match: 'fx__test_elicitation', scopes: ['ask'] }, 'fx__*'] } }],
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines },
    );
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has a denial line for each of its audited requests, none of which ran', async () => {
    const auth = { authorization: `Bearer ${narrow}` };
    const init = await post(gw, initializeBody('2025-03-26', 1), { headers: auth });
    assert.equal(init.status, 200, await init.text());
    const sid = init.headers.get('mcp-session-id')!;
    assert.equal((await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid, headers: auth })).status, 202);
    const call = (id: number, name: string, args: Json) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const batch = [call(2, 'test_simple_text', {}), call(3, 'test_elicitation', { message: 'a' }), { jsonrpc: '2.0', id: 4, method: 'tools/list' }, call(5, 'test_elicitation', { message: 'b' })];
    const refused = await post(gw, batch, { sid, headers: auth });
    assert.equal(refused.status, 403, await refused.clone().text());
    const lines = audited().map((l) => [l.subject, l.tenant, l.name, l.decision, l.outcome, String(l.rule).startsWith('missing scope') ? 'missing scope' : l.rule]);
    assert.deepEqual(
      lines,
      [
        ['ada', 'acme', 'test_simple_text', 'deny', 'denied', 'missing scope'],
        ['ada', 'acme', 'test_elicitation', 'deny', 'denied', 'missing scope'],
        ['ada', 'acme', 'test_elicitation', 'deny', 'denied', 'missing scope'],
      ],
      logLines.join('\n'),
    );
  });
});
