// Step-up (HTTP 403 insufficient_scope) for a call by a name shortened to maxToolNameLength: the edge judged
// the shortened name as sent, so the rule its stem matched decided, not the one the tool's canonical name
// matches (what the list and the policy stage go by). A tool listed to the caller and allowed without a
// scope got a 403 asking for the scope of another rule; one whose own rule asks a scope was answered
// "not found" (no challenge), or challenged for the wrong scope, after which the call was "not found"
// still. Found by a review.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { shortName } from '../../src/router/short-names.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';
import { ISSUER, PUBLIC_URL, connectWithToken, makeKey, signToken, type TestKey } from '../helpers/tokens.js';

const ENTERPRISE = 'gh__create_pull_request_review_comment_reply_in_thread_for_enterprise';
const COMMUNITY = 'gh__create_pull_request_review_comment_reply_in_thread_for_community';
// As the gateway shortens them (src/router/short-names.ts: the stem and 10 hex digits of the full name's SHA-256).
const ENTERPRISE_SHORT = shortName(ENTERPRISE, 64);
const COMMUNITY_SHORT = shortName(COMMUNITY, 64);

describe('step-up for a call by a shortened name: judged by the canonical name it stands for', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let key: TestKey;
  const clients: Array<{ close(): Promise<void> }> = [];
  const connect = async (scope?: string): Promise<Client> => {
    const c = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'acme', sub: 'u', ...(scope ? { scope } : {}) }));
    clients.push(c);
    return c.client;
  };
  /** What a call came to: "ran", "step-up <scope>" or the error's message. */
  const outcome = (p: Promise<unknown>) => p.then(() => 'ran', (e: Error) => /needs the scope [\w:]+/.exec(e.message)?.[0].replace('needs the scope', 'step-up') ?? e.message);

  before(async () => {
    key = await makeKey('short-step-up-key', 'ES256');
    const dir = mkdtempSync(join(tmpdir(), 'swb-short-step-up-'));
    writeFileSync(join(dir, 'key.jwk.json'), JSON.stringify(key.publicJwk));
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [join(dir, 'key.jwk.json')], algorithms: ['ES256'] },
      upstreams: [
        { name: 'gh', transport: 'stdio', command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', '--set', 'issues', '--long'], sandbox: 'none' },
        { name: 'fs', transport: 'stdio', command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', '--set', 'files'], sandbox: 'none' },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['gh', 'fs'] }],
      tenants: [
        {
          name: 'acme',
          endpoints: ['*'],
          // The enterprise tool asks repo:admin, the community one nothing; every other gh__create_pull_* asks repo:write.
          tools: { allow: [{ match: 'gh__*_for_enterprise', scopes: ['repo:admin'] }, 'gh__*_for_community', { match: 'gh__create_pull_*', scopes: ['repo:write'] }, '*'] },
        },
      ],
    });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw.close();
  });

  it('a listed tool its rule allows without a scope runs by its shortened name; one whose rule asks a scope gets the step-up for that scope', async () => {
    const plain = await connect();
    const listed = (await plain.listTools()).tools.map((t) => t.name);
    assert.ok(listed.includes(COMMUNITY_SHORT) && !listed.includes(ENTERPRISE_SHORT), listed.join(' '));
    assert.match(textOf(await plain.callTool({ name: COMMUNITY_SHORT, arguments: { body: 'hi' } })), /^create_pull_request_review_comment_reply_in_thread_for_community /);
    assert.equal(await outcome(plain.callTool({ name: ENTERPRISE_SHORT, arguments: { body: 'hi' } })), 'step-up repo:admin');
    assert.equal(await outcome((await connect('repo:write')).callTool({ name: ENTERPRISE_SHORT, arguments: { body: 'hi' } })), 'step-up repo:admin');
    const admin = await connect('repo:admin');
    assert.ok((await admin.listTools()).tools.some((t) => t.name === ENTERPRISE_SHORT));
    assert.match(textOf(await admin.callTool({ name: ENTERPRISE_SHORT, arguments: { body: 'hi' } })), /^create_pull_request_review_comment_reply_in_thread_for_enterprise /);
  });

  it('a 2026-07-28 request by a shortened name: judged the same', async () => {
    const token = await signToken(key, { tenant: 'acme', sub: 'm' });
    const community = await modernPost(gw.url('/mcp'), 'tools/call', { name: COMMUNITY_SHORT, arguments: { body: 'hi' } }, { token });
    assert.equal(community.status, 200, JSON.stringify(community.body));
    const enterprise = await modernPost(gw.url('/mcp'), 'tools/call', { name: ENTERPRISE_SHORT, arguments: { body: 'hi' } }, { token });
    assert.equal(enterprise.status, 403, JSON.stringify(enterprise.body));
    assert.match(String(enterprise.body?.error?.message), /needs the scope repo:admin$/);
  });
});
