// An upstream's instructions (initialize's, server/discover's) are model-facing text from that server and
// name it (under "## <upstream>"): a tenant whose policy lets it see nothing of an upstream (every tool and
// prompt of it denied, or allowed by no pattern, and no resource at all) is not given them, in either era.
// Before (found by a review) every tenant of the endpoint was. Two stdio upstreams that each give
// "process <pid>" as instructions; the official SDK client (2025) and raw 2026-07-28 POSTs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { ISSUER, PUBLIC_URL, signHmac } from '../helpers/tokens.js';

const HMAC_SECRET = 'instructions-reach-test-hmac-secret-32+chars';
const upstream = (name: string) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/params-recording-server.mjs', '--own-instructions'], sandbox: 'none' as const, sharing: 'shared' as const });
const NONE = { allow: [] };

describe("instructions of an upstream a tenant can see nothing of", { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const tokens: Record<string, string> = {};
  const clients: Client[] = [];
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], hmacSecret: HMAC_SECRET, allowHmac: true, algorithms: ['HS256'] },
      tenants: [
        { name: 'all', endpoints: ['*'] },
        // Denied every tool and prompt of "secret"; no resources at all.
        { name: 'denied', endpoints: ['*'], tools: { allow: ['*'], deny: ['secret__*'] }, prompts: { allow: ['*'], deny: ['sec*'] }, resources: NONE },
        // Allowed only "open"'s tools: no pattern names "secret".
        { name: 'narrow', endpoints: ['*'], tools: { allow: ['open__*'] }, prompts: NONE, resources: NONE },
        // One prompt of "secret" is enough to be told of it.
        { name: 'prompt', endpoints: ['*'], tools: { allow: ['open__*'] }, prompts: { allow: ['secret__greet'] }, resources: NONE },
      ],
      upstreams: [upstream('open'), upstream('secret')],
      endpoints: [{ path: '/mcp', upstreams: ['open', 'secret'] }, { path: '/solo', upstreams: ['secret'] }],
    });
    for (const t of ['all', 'denied', 'narrow', 'prompt']) tokens[t] = await signHmac(HMAC_SECRET, { sub: `u-${t}`, tenant: t, expIn: 3600 });
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await gw?.close();
  });

  const legacy = async (tenant: string, path = '/mcp'): Promise<string | undefined> => {
    const client = new Client({ name: 'instructions-reach', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(gw.url(path), { requestInit: { headers: { authorization: `Bearer ${tokens[tenant]}` } } }));
    return client.getInstructions();
  };
  const modern = async (tenant: string, path = '/mcp'): Promise<string | undefined> => {
    const r = await modernPost(gw.url(path), 'server/discover', {}, { token: tokens[tenant] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.result.instructions;
  };

  for (const [era, instructionsOf] of [['2025 (SDK initialize)', legacy], ['2026-07-28 (server/discover)', modern]] as const) {
    it(`${era}: a tenant allowed something of both is told of both`, async () => {
      const text = String(await instructionsOf('all'));
      assert.match(text, /## open\nprocess \d+/);
      assert.match(text, /## secret\nprocess \d+/);
    });

    it(`${era}: denied all of it, or named by no pattern: no "## secret" and none of its text`, async () => {
      for (const tenant of ['denied', 'narrow']) {
        const text = String(await instructionsOf(tenant));
        assert.match(text, /^process \d+$|## open\nprocess \d+/, tenant);
        assert.ok(!text.includes('secret'), `${tenant}: ${text}`);
      }
      assert.equal(await instructionsOf('denied', '/solo'), undefined, 'an endpoint of that upstream alone (unprefixed: a deny of the prefixed name takes the tool): no instructions');
    });

    it(`${era}: one prompt of it allowed: told of it`, async () => {
      assert.match(String(await instructionsOf('prompt')), /## secret\nprocess \d+/);
    });
  }
});
