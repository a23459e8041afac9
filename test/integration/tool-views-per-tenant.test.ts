// A search-mode endpoint kept four views (catalogue versions) per curation and dropped the oldest for a
// fifth: with a per-tenant upstream whose tools differ by tenant (a server whose tools depend on the
// tenant's credentials), six tenants taking turns each found their view gone and rebuilt it, with its
// name assignment and search index, on every request. The index is built once per catalogue change,
// never per request: each tenant's view is built once, however often it searches (found by a review).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { ISSUER, PUBLIC_URL, connectWithToken, makeKey, signToken, type TokenClient } from '../helpers/tokens.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-views-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const TENANTS = ['t1', 't2', 't3', 't4', 't5', 't6'];
const ROUNDS = 3;

type Found = { structuredContent: { tools: Array<{ name: string }> } };

describe('tool views per tenant (found by a review)', { timeout: 60_000 }, () => {
  it('six tenants with catalogues of their own build one view each, however often they search', async () => {
    const key = await makeKey('views-key', 'ES256');
    const keyFile = join(dir, 'key.jwk.json');
    writeFileSync(keyFile, JSON.stringify(key.publicJwk));
    const logLines: string[] = [];
    const gw = await startGateway(
      {
        server: { publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [keyFile], algorithms: ['ES256'] },
        pinning: { mode: 'off' },
        upstreams: [{ name: 'cat', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'files', '--own-tool'], sandbox: 'none', sharing: 'per-tenant' }],
        endpoints: [{ path: '/mcp', upstreams: ['cat'], tools: { exposure: 'search' } }],
        tenants: TENANTS.map((name) => ({ name, endpoints: ['*'] })),
      },
      { logLines },
    );
    const clients: TokenClient[] = [];
    try {
      for (const tenant of TENANTS) clients.push(await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant, sub: tenant })));
      const whoami = new Set<string>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const c of clients) {
          const r = (await c.client.callTool({ name: 'search_tools', arguments: { query: 'which process answers whoami' } })) as unknown as Found;
          const own = r.structuredContent.tools.map((t) => t.name).filter((n) => n.startsWith('whoami_'));
          assert.equal(own.length, 1, 'each tenant finds its own process’s tool, and only that');
          whoami.add(own[0]!);
        }
      }
      assert.equal(whoami.size, TENANTS.length, 'a catalogue of its own per tenant');
      const built = logLines.filter((l) => JSON.parse(l).msg === 'tool catalogue view built');
      assert.equal(built.length, TENANTS.length, `views built: ${built.length} for ${TENANTS.length} tenants × ${ROUNDS} searches each`);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await gw.close();
    }
  });
});
