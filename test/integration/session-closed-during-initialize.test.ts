// A session ended (admin API DELETE /sessions/:id) while its initialize waits on an upstream process that
// has not answered its own initialize yet (held by a gate file), the process then failing: the session
// closes once. Its failed initialize used to put it back to UNINITIALIZED, so the edge's close('initialize
// failed') closed it a second time (the 'session closed' line, onClosed: its event log dropped and the
// cluster told it ended, twice).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, mcpRequest } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const GATED = join(import.meta.dirname, '..', 'fixtures', 'gated-server.mjs');

describe('a session closed during its initialize (found by a review)', () => {
  let dir: string;
  let gate: string;
  let gw: RunningGateway;
  const logLines: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-closed-init-'));
    gate = join(dir, 'gate');
    gw = await startGateway(
      {
        metrics: { enabled: false },
        admin: { enabled: true, port: 0 },
        tenants: [{ name: 'anonymous', endpoints: ['*'] }],
        upstreams: [{ name: 'gated', transport: 'stdio', command: process.execPath, args: [GATED, '--gate', gate], sandbox: 'none', sharing: 'per-session' }],
        endpoints: [{ path: '/mcp', upstreams: ['gated'] }],
      },
      { logLines },
    );
  });

  after(async () => {
    if (!existsSync(gate)) writeFileSync(gate, '');
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is closed once: one "session closed" line, and its initialize is answered with an error', async () => {
    const admin = (method: string, path: string) => fetch(new URL(path, gw.app.adminUrl), { method });
    const init = mcpRequest(gw, initializeBody());
    await until('the upstream process is asked to initialize', () => existsSync(`${gate}.asked`));
    let id: string | undefined;
    await until('the session is listed', async () => {
      const rows = ((await (await admin('GET', '/sessions')).json()) as { items: Array<{ id: string }> }).items;
      id = rows[0]?.id;
      return id !== undefined;
    });
    const ended = await admin('DELETE', `/sessions/${id}`);
    assert.ok(ended.ok, `DELETE /sessions/${id}: HTTP ${ended.status}`);
    // The upstream process then fails to start (it ends before answering): the session's initialize fails.
    process.kill(Number(readFileSync(`${gate}.asked`, 'utf8')), 'SIGKILL');
    const answer = await init;
    assert.ok(answer.json?.error, `initialize should fail: ${answer.text}`);
    assert.equal(answer.headers.get('mcp-session-id'), null, 'no session id for a session that ended');
    const closed = logLines.filter((l) => l.includes('"msg":"session closed"') && l.includes(id!));
    assert.equal(closed.length, 1, `closed more than once:\n${closed.join('')}`);
  });
});
