// An upstream's initialize `instructions` had no bound of their own, only the message's (16 MiB), and every
// client of the endpoint is given them at initialize (server/discover), where a host puts them in its
// model's system prompt (found by a review, 2026-12-07). Now each upstream's are passed on up to 16 KiB
// (UTF-8), cut on a character boundary and marked, with one warning line per start. Real stdio children
// (test/fixtures/lying-initialize-server.mjs), the official SDK client and a raw 2026-07-28 server/discover.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';

const upstream = (name: string, instructions: string) => ({ name, transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/lying-initialize-server.mjs', JSON.stringify({ instructions })], sandbox: 'none' as const, sharing: 'shared' as const });

const LIMIT = 16 * 1024;
const MARKER = '\n\n[instructions cut by the gateway at 16 KiB]';
/** 40,000 bytes of four-byte characters (each a surrogate pair): a cut inside one would leave half of it. */
const LONG = 'x' + '😀'.repeat(10_000);
const SHORT = 'use echo';

describe('an upstream whose instructions are longer than the gateway passes on', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const logLines: string[] = [];
  const clients: Client[] = [];
  const connect = async (path: string) => {
    const client = new Client({ name: 'instructions-cap-test', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(gw.url(path)));
    return client;
  };
  before(async () => {
    gw = await startGateway(
      {
        upstreams: [upstream('long', LONG), upstream('short', SHORT)],
        endpoints: [
          { path: '/long', upstreams: ['long'] },
          { path: '/both', upstreams: ['long', 'short'] },
        ],
      },
      { logLines },
    );
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await gw?.close();
  });

  const checkCut = (text: string | undefined) => {
    assert.ok(text !== undefined, 'instructions are given');
    assert.ok(text.endsWith(MARKER), 'marked as cut');
    assert.ok(Buffer.byteLength(text) <= LIMIT, `at most 16 KiB, not ${Buffer.byteLength(text)} bytes`);
    const kept = text.slice(0, -MARKER.length);
    assert.ok(LONG.startsWith(kept), 'what is kept is the start of the upstream text');
    assert.ok(Buffer.byteLength(kept) > LIMIT - MARKER.length - 4, 'cut at the bound, not before');
    assert.equal(Buffer.from(kept, 'utf8').toString('utf8'), kept, 'no half of a character is kept');
  };

  it('alone on its endpoint: a session is given the start of them, marked as cut', async () => {
    checkCut((await connect('/long')).getInstructions());
  });

  it('beside another upstream: its part is cut, the other one given whole', async () => {
    const text = (await connect('/both')).getInstructions() ?? '';
    const [long, short] = text.split('\n\n## short\n');
    assert.equal(short, SHORT);
    assert.ok(long!.startsWith('## long\n'));
    checkCut(long!.slice('## long\n'.length));
  });

  it('2026-07-28: server/discover gives them cut the same way', async () => {
    const r = await modernPost(gw.url('/long'), 'server/discover', {});
    checkCut(r.body.result?.instructions);
  });

  it('one warning line for the start of the upstream, not one per session', async () => {
    const warned = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => typeof l.msg === 'string' && l.msg.startsWith('upstream instructions longer than'));
    assert.equal(warned.length, 1, JSON.stringify(warned));
    assert.equal(warned[0]!.upstream, 'long', 'the line names the upstream');
    assert.equal(warned[0]!.limit, LIMIT);
    assert.equal(warned[0]!.bytes, Buffer.byteLength(LONG));
  });
});
