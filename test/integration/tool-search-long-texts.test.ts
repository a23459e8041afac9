// An upstream's tool texts are indexed for search_tools as they come: a name or description is split into
// words, and a run of capital letters was split by a backtracking expression, in time quadratic in the run.
// One tool whose description is 2 MB of capitals (well under the 8 MB a listing may weigh) held the
// gateway's event loop for most of an hour while the index was built, at start (before it listened) and
// after every tools/list_changed: every endpoint and every client of the gateway waited. The gateway runs
// as `serve` in a child process here, so that the test's own timer still runs while it is held (found by
// a review).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { listeningAddress } from '../helpers/processes.js';
import { connectClient } from '../helpers/sdk.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
type Json = Record<string, any>;

describe('search mode with an upstream whose tool texts are long runs of capitals (found by a review)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-long-texts-'));
  let child: ChildProcess | undefined;
  let client: Client | undefined;

  before(() => {
    const tools = [{ name: 'shout', description: 'A'.repeat(2_000_000), inputSchema: { type: 'object', properties: {} } }];
    writeFileSync(join(dir, 'tools.json'), JSON.stringify(tools));
    const upstream = { name: 'gh', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [join(ROOT, 'test/fixtures/catalogue-server.mjs'), '--set', 'issues', '--tools', join(dir, 'tools.json')] };
    const config = { server: { host: '127.0.0.1', port: 0 }, metrics: { enabled: false }, upstreams: [upstream], endpoints: [{ path: '/mcp', upstreams: ['gh'], tools: { exposure: 'search' } }] };
    writeFileSync(join(dir, 'switchboard.yaml'), JSON.stringify(config));
  });
  after(async () => {
    await client?.close().catch(() => {});
    // A gateway that listens stops as serve stops (its upstream with it); one held in its index build cannot.
    if (child && child.exitCode === null) await new Promise((r) => (child!.once('exit', r), child!.kill(client ? 'SIGTERM' : 'SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds its index and answers searches without holding the event loop', { timeout: 120_000 }, async () => {
    child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts'), 'serve', '--config', join(dir, 'switchboard.yaml')], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The index is built before the gateway listens: held there, it never says it listens.
    const address = (await listeningAddress(child, 60_000)).replace('localhost', '127.0.0.1');
    client = await connectClient({ url: (p = '/mcp') => new URL(p, address) } as RunningGateway, 'streamable-http');
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'create an issue' } });
    assert.equal((found as Json).structuredContent.tools[0].name, 'create_issue');
    const shout = await client.callTool({ name: 'search_tools', arguments: { query: 'shout' } });
    assert.equal((shout as Json).structuredContent.tools[0].name, 'shout');
  });
});
