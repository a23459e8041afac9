// Two shared upstreams that list the same URI, and two tenants of one endpoint: one whose rules reach only
// upstream a's tools and prompts, one that reaches everything. Suspected in a review: the narrow tenant's
// listing (of a alone) moved the endpoint's owner of the URI to a for every tenant, and the wide tenant's
// sent the narrow one's reads to b, which it may not see. It does not: resource rules match URIs and name no
// upstream, so every tenant allowed any resource is listed every upstream's resources, and its reads of the
// URI go where everyone's do. Pinned here, as the README said otherwise until 2026-12-08.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, PUBLIC_URL, connectWithToken, makeKey, signToken, type TestKey } from '../helpers/tokens.js';
import { textOf } from '../helpers/sdk.js';

const dir = mkdtempSync(join(tmpdir(), 'swb-same-uri-'));
const notes = (name: string) => ({
  name,
  transport: 'stdio' as const,
  command: process.execPath,
  args: ['test/fixtures/notes-server.mjs'],
  sandbox: 'none' as const,
  sharing: 'shared' as const,
  pool: { size: 1 },
  env: { NOTES_LABEL: name },
});

describe('a URI two shared upstreams list, read by tenants that see different upstreams', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let key: TestKey;
  before(async () => {
    key = await makeKey('same-uri', 'ES256');
    const keyFile = join(dir, 'key.jwk.json');
    writeFileSync(keyFile, JSON.stringify(key.publicJwk));
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [keyFile], algorithms: ['ES256'] },
      pinning: { mode: 'off' },
      upstreams: [notes('a'), notes('b')],
      endpoints: [{ path: '/mcp', upstreams: ['a', 'b'] }],
      tenants: [
        { name: 'narrow', endpoints: ['*'], tools: { allow: ['a__*'] }, prompts: { allow: ['a__*'] } },
        { name: 'wide', endpoints: ['*'] },
      ],
    });
  });
  after(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("one tenant's listing does not change where the other's reads go", async () => {
    const narrow = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'narrow', sub: 'n' }));
    const wide = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'wide', sub: 'w' }));
    try {
      for (const tool of ['a__add_note', 'b__add_note']) await wide.client.callTool({ name: tool, arguments: { uri: 'x://same' } });
      const read = (c: typeof wide) => c.client.readResource({ uri: 'x://same' }).then((r) => textOf({ content: r.contents }));
      const seen = async (c: typeof wide) => (await c.client.listResources()).resources.filter((r) => r.uri === 'x://same').length;
      assert.equal(await seen(wide), 2);
      assert.equal(await read(wide), 'note x://same from b');
      assert.equal(await read(narrow), 'note x://same from b');
      assert.equal(await seen(narrow), 2, "the narrow tenant's list shows b's resource too: its rules name URIs, not upstreams");
      assert.equal(await read(wide), 'note x://same from b', "narrow's listing left wide's reads where they were");
      assert.equal(await read(narrow), 'note x://same from b');
    } finally {
      await narrow.close();
      await wide.close();
    }
  });
});
