// A file URI with a host or a query (file://any-host/dir/secret/key.txt, file://u@/dir/secret/key.txt,
// file:///etc/shadow?x=1): found by a review, 2026-12-07. Such a URI is in normal form, so the rules matched it as
// written, and a deny of file:///dir/secret* (or an exact one of file:///etc/shadow) did not cover it; a server
// that reads a file URI's path and ignores its host and query (new URL(uri).pathname in Node, urlparse(uri).path in
// Python, url.Parse in Go: the common reading) serves the denied file. Now the deny rules (and the scopes of the
// rule that first matches) also judge such a URI as that path alone; an allow
// still needs the URI as written (on a server that reads the host, file://h/… is another machine's file).
// Real gateway, the crossing fixture (reads any URI; tools/call `heard` says what it received), the official SDK
// client over Streamable HTTP and a raw 2026-07-28 POST.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

const HOSTED = ['file://evil/dir/secret/key.txt', 'file://u@/dir/secret/key.txt', 'file://u@evil.example/dir/secret/key.txt', 'file:///etc/shadow?x=1'];

describe('file URIs with a host or a query, for a tenant with a deny rule', () => {
  let gw: RunningGateway;
  let client: Client;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], resources: { allow: ['*'], deny: ['file:///dir/secret*', 'file:///etc/shadow'] } }],
      upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, args: ['test/fixtures/crossing-server.mjs'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    });
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw.close();
  });

  it('a 2025 session: the denied path under any host reads like an unknown resource, and is never forwarded', async () => {
    for (const uri of HOSTED) await assert.rejects(client.readResource({ uri }), (e: any) => e.code === -32002, uri);
    const allowed = await client.readResource({ uri: 'file://evil/dir/a.txt' });
    assert.deepEqual(allowed.contents.map((c) => c.uri), ['file://evil/dir/a.txt'], 'a path no deny covers still reads');
    const heard = JSON.parse(((await client.callTool({ name: 'heard', arguments: {} })).content as any)[0].text) as Array<{ uri?: string }>;
    const reads = heard.filter((h) => h.uri !== undefined).map((h) => h.uri);
    assert.deepEqual(reads, ['file://evil/dir/a.txt'], `the upstream was sent: ${JSON.stringify(reads)}`);
  });

  it('a 2026-07-28 request is refused the same', async () => {
    for (const uri of HOSTED) {
      const a = await modernPost(gw.url(), 'resources/read', { uri }, { caps: {} });
      assert.equal(a.body.error?.code, -32602, `${uri}: ${JSON.stringify(a.body)}`);
    }
  });
});
