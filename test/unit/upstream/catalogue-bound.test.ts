// An instance's catalogue (every page of its tools/list, kept for tool pinning, lookups and every
// session's tools/list) is bounded like one answer: maxResultBytes in all. Each page alone was bounded,
// and up to 1000 pages were kept: a server that hands out cursors without end (each page just under the
// limit, 8 MiB by default) had the gateway hold gigabytes, per instance (per session with per-session),
// until it ran out of memory. A real stdio child process, started by the gateway's own transport factory.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { GatewayError } from '../../../src/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';

const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} };

/** Four tools of about 1 KB a page, `pages` pages (0: without end), and how many pages were asked for, as a tool. */
const SERVER = `
const pages = Number(process.argv[1]);
let asked = 0;
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
let buf = '';
process.stdin.on('data', (c) => {
  buf += c;
  for (let nl; (nl = buf.indexOf('\\n')) !== -1; ) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (m.id === undefined) continue;
    if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'pages', version: '1' } } });
    else if (m.method === 'tools/list') {
      const page = Number(m.params?.cursor ?? 0);
      asked++;
      const tools = [0, 1, 2, 3].map((i) => ({ name: 't' + page + '_' + i, description: 'x'.repeat(1000), inputSchema: { type: 'object' } }));
      send({ jsonrpc: '2.0', id: m.id, result: { tools, ...(pages === 0 || page + 1 < pages ? { nextCursor: String(page + 1) } : {}) } });
    } else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: String(asked) }] } });
    else send({ jsonrpc: '2.0', id: m.id, result: {} });
  }
});
`;

async function withPool(pages: number, run: (pool: UpstreamPool) => Promise<void>): Promise<void> {
  const cfg = parseConfig({
    upstreams: [{ name: 'pages', transport: 'stdio', command: process.execPath, args: ['-e', SERVER, String(pages)], sandbox: 'none', maxResultBytes: 16384, healthCheck: { intervalMs: 0 } }],
    endpoints: [{ path: '/mcp', upstreams: ['pages'] }],
  }, 'test', {});
  const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), new UpstreamTransports().create);
  await pool.start();
  try {
    await run(pool);
  } finally {
    await pool.close();
  }
}

const pagesAsked = async (pool: UpstreamPool) => Number(((await pool.instanceFor(caller).request('tools/call', { name: 'asked', arguments: {} }, {})).content as Array<{ text: string }>)[0]!.text);

describe('an instance catalogue is bounded by maxResultBytes in all its pages (found by a review)', () => {
  it('a server handing out cursors without end: the listing fails with SWB_RESULT_TOO_LARGE after a few pages, not 1000 of them kept', async () => {
    await withPool(0, async (pool) => {
      const inst = pool.instanceFor(caller);
      await assert.rejects(inst.catalogues.get('tools'), (e: unknown) => e instanceof GatewayError && e.code === 'SWB_RESULT_TOO_LARGE' && /maxResultBytes/.test(e.message));
      assert.ok((await pagesAsked(pool)) <= 5, 'it stopped asking once past the bound');
    });
  });

  it('a catalogue of a few pages within the bound is listed whole', async () => {
    await withPool(3, async (pool) => {
      const catalogue = await pool.instanceFor(caller).catalogues.get('tools');
      assert.equal(catalogue.size, 12);
      assert.equal(await pagesAsked(pool), 3);
    });
  });
});
