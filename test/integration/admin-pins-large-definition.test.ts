// GET /pins (and the console's pins view, recomputed every two seconds while a console is open) diffs
// the approved and the pending definition of every changed tool. The diff filled a table of one number
// per pair of lines, so an upstream whose tool has a large definition (a schema of some thousand
// properties, as OpenAPI bridges produce, or a rug pull made large on purpose) made each computation
// take gigabytes and seconds of the event loop: 10,000 lines each side held the gateway for 4 s and
// 900 MB, 25,000 ended it (out of memory). A gateway process with a smaller heap than the default
// shows it at 10,000 lines. The fixture: test/fixtures/shifty-server.mjs --big-schema.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { canonicalJson } from '../../src/policy/tool-pin-hash.js';
import { startReplicaFrom, type Replica } from '../helpers/replicas.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'admin-token-large-pin-definitions-0123456789';
const PROPERTIES = 2500; // about 10,000 lines per definition

describe('GET /pins with a large tool definition', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-pins-large-'));
  const shiftFile = join(dir, 'shift');
  let gw: Replica;
  let client: Client;

  before(async () => {
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        server: { host: '127.0.0.1', port: 0 },
        metrics: { enabled: false },
        admin: { enabled: true, port: 0, token: TOKEN },
        upstreams: [{ name: 'shifty', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [resolve('test/fixtures/shifty-server.mjs'), '--big-schema', String(PROPERTIES)], env: { SHIFT_FILE: shiftFile } }],
        endpoints: [{ path: '/mcp', upstreams: ['shifty'] }],
      }),
    );
    gw = await startReplicaFrom('pins-large', file, ['--max-old-space-size=384']);
    client = new Client({ name: 'pins-large', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.base)));
  });
  after(async () => {
    await client?.close().catch(() => {});
    gw?.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers with a diff that rebuilds both definitions, and the gateway keeps running', async () => {
    const names = async () => (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(await names(), ['echo', 'weather'], 'first sight: pinned');
    writeFileSync(shiftFile, '');
    await until('the changed tool withheld', async () => !(await names()).includes('weather'), 20_000);

    let exited = false;
    void gw.exited.then(() => (exited = true));
    const res = await fetch(new URL('/pins', gw.admin), { headers: { authorization: `Bearer ${TOKEN}` } }).catch((err: Error) => err);
    assert.ok(!(res instanceof Error), `GET /pins answered (${res instanceof Error ? `${res.message}: the gateway process ended?` : ''})`);
    assert.equal(res.status, 200);
    const change = ((await res.json()) as { items: any[] }).items.find((p) => p.tool === 'weather');
    assert.ok(change.old && change.new, 'both definitions shown');
    const diff = change.diff as string[];
    assert.ok(diff.length >= 10_000, `a line per definition line at least: ${diff.length}`);
    const side = (keep: string) => diff.filter((l) => l.startsWith('  ') || l.startsWith(keep)).map((l) => l.slice(2));
    // As the admin API writes a definition before diffing it: keys sorted, two-space indented.
    const lines = (def: Record<string, unknown>) => JSON.stringify(JSON.parse(canonicalJson(def)), null, 2).split('\n');
    assert.deepEqual(side('- '), lines(change.old), 'the kept and removed lines are the approved definition');
    assert.deepEqual(side('+ '), lines(change.new), 'the kept and added lines are the pending one');
    assert.ok(diff.some((l) => l.startsWith('+ ') && l.includes('IMPORTANT')), 'the poisoned description is an added line');
    assert.ok(diff.filter((l) => !l.startsWith('  ')).length < 20, 'only what changed is marked (the properties in common are kept)');
    assert.equal(exited, false);
  });
});
