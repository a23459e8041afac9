// Two ways past a tenant's resource deny rules, found by a review on 2026-12-07. Both tests use a real gateway,
// the crossing fixture, the official SDK client over Streamable HTTP and a raw 2026-07-28 POST. The fixture reads
// any URI, answers a read of file:///dir with the directory and two children, and its tools/call `heard` says
// what it received.
//
// 1. resources/read of a URI the tenant may read whose answer holds the contents of other URIs (the spec lets a
//    read answer several, such as a directory and its files). Only the URI asked was judged, so a tenant denied
//    file:///dir/secret* read file:///dir/secret/key.txt's text by reading file:///dir, in both eras, though a
//    read of the child itself, a list and its updates all hide it. Now a content item under a URI the tenant's
//    rules deny is left out of the answer, as a list leaves the URI out.
// 2. A file URI with a host or a query (file://any-host/dir/secret/key.txt, file://u@/dir/secret/key.txt,
//    file:///etc/shadow?x=1). Such a URI is in normal form, so the rules matched it as written, and a deny of
//    file:///dir/secret* (or an exact one of file:///etc/shadow) did not cover it. A server that reads a file
//    URI's path and ignores its host and query serves the denied file: new URL(uri).pathname in Node,
//    urlparse(uri).path in Python and url.Parse in Go all read it that way. Now the deny rules, and the scopes of
//    the rule that first matches, also judge such a URI as that path alone. An allow still needs the URI as
//    written: on a server that reads the host, file://h/… is another machine's file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';

const DIR = 'file:///dir';
const CHILD = 'file:///dir/a.txt';
const DENIED = 'file:///dir/secret/key.txt';
const HOSTED = ['file://evil/dir/secret/key.txt', 'file://u@/dir/secret/key.txt', 'file://u@evil.example/dir/secret/key.txt', 'file:///etc/shadow?x=1'];

describe('resources/read for a tenant with resource deny rules', () => {
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

  describe('contents under URIs the tenant may not read', () => {
    it('the denied child itself reads like an unknown resource', async () => {
      await assert.rejects(client.readResource({ uri: DENIED }), (e: any) => e.code === -32002);
    });

    it('a 2025 session reads the directory without the denied child', async () => {
      const read = await client.readResource({ uri: DIR });
      assert.deepEqual(read.contents.map((c) => c.uri), [DIR, CHILD]);
      assert.ok(!JSON.stringify(read).includes('secret'), JSON.stringify(read));
    });

    it('a 2026-07-28 request reads it without the denied child too', async () => {
      const a = await modernPost(gw.url(), 'resources/read', { uri: DIR }, { caps: {} });
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.deepEqual(a.body.result.contents.map((c: any) => c.uri), [DIR, CHILD]);
      assert.ok(!JSON.stringify(a.body).includes('secret'), JSON.stringify(a.body));
    });
  });

  describe('file URIs with a host or a query', () => {
    it('a 2025 session: the denied path under any host reads like an unknown resource, and is never forwarded', async () => {
      const before = (await heardReads(client)).length;
      for (const uri of HOSTED) await assert.rejects(client.readResource({ uri }), (e: any) => e.code === -32002, uri);
      const allowed = await client.readResource({ uri: 'file://evil/dir/a.txt' });
      assert.deepEqual(allowed.contents.map((c) => c.uri), ['file://evil/dir/a.txt'], 'a path no deny covers still reads');
      const reads = (await heardReads(client)).slice(before);
      assert.deepEqual(reads, ['file://evil/dir/a.txt'], `the upstream was sent: ${JSON.stringify(reads)}`);
    });

    it('a 2026-07-28 request is refused the same', async () => {
      for (const uri of HOSTED) {
        const a = await modernPost(gw.url(), 'resources/read', { uri }, { caps: {} });
        assert.equal(a.body.error?.code, -32602, `${uri}: ${JSON.stringify(a.body)}`);
      }
    });
  });

  // 3. A NUL written as itself (not %00) in a URI's path: the rules matched file:///etc/shadow<NUL>.txt as written, past
  //    an exact deny of file:///etc/shadow, and a server that hands the path to C reads /etc/shadow. Refused as
  //    ambiguous, as the escaped NUL always was (the check ran only on a path that held a '%' or a '\').
  describe('a NUL in the path as itself', () => {
    // A 2026-07-28 read cannot carry it: its Mcp-Name header must mirror the URI, and no header holds a NUL.
    it('reads like an unknown resource, and is never forwarded', async () => {
      const before = (await heardReads(client)).length;
      for (const uri of ['file:///etc/shadow\u0000.txt', 'file:///dir/a.txt\u0000']) {
        await assert.rejects(client.readResource({ uri }), (e: any) => e.code === -32002, JSON.stringify(uri));
      }
      assert.deepEqual((await heardReads(client)).slice(before), [], 'the upstream was sent a read');
    });
  });
});

/** The URIs the fixture has been asked to read so far, in order. */
async function heardReads(client: Client): Promise<string[]> {
  const heard = JSON.parse(((await client.callTool({ name: 'heard', arguments: {} })).content as any)[0].text) as Array<{ uri?: string }>;
  return heard.filter((h) => h.uri !== undefined).map((h) => h.uri!);
}
