// A tenant whose allow rule asks a scope for a tool (step-up): a direct call without it is refused at the
// edge with HTTP 403 insufficient_scope, which tells the client which scope to get. The same tool called
// through call_tool or by its curated rename was judged there by the name as sent (call_tool, the rename),
// which no scoped rule matched, then refused by policy as an unknown tool: the client was never told to
// step up, and the model took the tool for one that does not exist. Found by a review.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';
import { ISSUER, PUBLIC_URL, connectWithToken, makeKey, signToken, type TestKey } from '../helpers/tokens.js';

const upstream = (name: string, ...args: string[]) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', ...args], sandbox: 'none' as const });

describe('step-up (403 insufficient_scope) through call_tool and curated names', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let key: TestKey;
  const logLines: string[] = [];
  const clients: Array<{ close(): Promise<void> }> = [];
  const connect = async (path: string, scope?: string) => {
    const c = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'acme', sub: 'u', ...(scope ? { scope } : {}) }), { path });
    clients.push(c);
    return c.client;
  };
  const refusal = (p: Promise<unknown>) => p.then(() => 'answered', (e: Error) => (/needs the scope repo:admin/.test(e.message) ? 'step-up' : e.message));

  before(async () => {
    key = await makeKey('step-up-key', 'ES256');
    const dir = mkdtempSync(join(tmpdir(), 'swb-step-up-'));
    writeFileSync(join(dir, 'key.jwk.json'), JSON.stringify(key.publicJwk));
    gw = await startGateway(
      {
        server: { publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [join(dir, 'key.jwk.json')], algorithms: ['ES256'] },
        upstreams: [upstream('gh', '--set', 'issues'), upstream('fs', '--set', 'files')],
        endpoints: [
          { path: '/search', upstreams: ['gh', 'fs'], tools: { exposure: 'search' } },
          { path: '/curated', upstreams: ['gh', 'fs'], tools: { overrides: { gh__delete_repository: { name: 'drop_repo' } } } },
        ],
        tenants: [{ name: 'acme', endpoints: ['*'], tools: { allow: [{ match: 'gh__delete_*', scopes: ['repo:admin'] }, '*'] } }],
      },
      { logLines },
    );
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw.close();
  });

  it('call_tool of a tool whose rule asks a scope the token lacks: the step-up a direct call gets', async () => {
    const c = await connect('/search');
    assert.equal(await refusal(c.callTool({ name: 'gh__delete_repository', arguments: { repo: 'a/b' } })), 'step-up', 'a direct call');
    assert.equal(await refusal(c.callTool({ name: 'call_tool', arguments: { name: 'gh__delete_repository', arguments: { repo: 'a/b' } } })), 'step-up');
    // Another tool through call_tool, and search_tools, ask nothing more.
    assert.match(textOf(await c.callTool({ name: 'call_tool', arguments: { name: 'fs__read_file', arguments: { path: '/a' } } })), /^read_file /);
    assert.equal(await refusal(c.callTool({ name: 'search_tools', arguments: { query: 'delete a repository' } }).then(() => undefined)), 'answered');
  });

  it('a renamed tool whose canonical name\'s rule asks a scope: the step-up, and with the scope the call runs', async () => {
    assert.equal(await refusal((await connect('/curated')).callTool({ name: 'drop_repo', arguments: { repo: 'a/b' } })), 'step-up');
    assert.match(textOf(await (await connect('/curated', 'repo:admin')).callTool({ name: 'drop_repo', arguments: { repo: 'a/b' } })), /^delete_repository /);
  });

  it('a 2026-07-28 request through call_tool or by a rename: the 403 a direct one gets', async () => {
    const token = await signToken(key, { tenant: 'acme', sub: 'm' });
    const direct = await modernPost(gw.url('/search'), 'tools/call', { name: 'gh__delete_repository', arguments: { repo: 'a/b' } }, { token });
    assert.equal(direct.status, 403);
    const wrapped = await modernPost(gw.url('/search'), 'tools/call', { name: 'call_tool', arguments: { name: 'gh__delete_repository', arguments: { repo: 'a/b' } } }, { token });
    assert.equal(wrapped.status, 403, JSON.stringify(wrapped.body));
    const renamed = await modernPost(gw.url('/curated'), 'tools/call', { name: 'drop_repo', arguments: { repo: 'a/b' } }, { token });
    assert.equal(renamed.status, 403, JSON.stringify(renamed.body));
  });
});
