// The console's /events stream with a large sessions view (found by a review, 2026-12-06). A console that
// opened while the views were not computed yet got each of them twice (the first tick sent them, then the
// opening sent them again), and a console whose buffered output passed 1 MiB was cut as "too slow" before
// it could read anything: with some 2,000 sessions (a 600 KB view, sent twice) every console was cut as it
// opened, reconnected and was cut again, for good ("Reconnecting…"). Real gateway, real sessions.
// The view holds CONSOLE_SESSIONS sessions at most now (admin-events-bounded-views): its rows are made
// large here so that it still passes 1 MiB.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONSOLE_SESSIONS } from '../../src/admin/admin-events.js';
import { events } from '../helpers/admin-events.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { RAW_HEADERS, RAW_INIT } from '../helpers/raw-mcp.js';
import { until } from '../helpers/wait.js';

// A long endpoint path makes each session's row large (about 6.3 KB): CONSOLE_SESSIONS (200) are a view of 1.3 MB.
const PATH = `/${'p'.repeat(6000)}`;
const SESSIONS = CONSOLE_SESSIONS + 50;

describe('admin /events: a sessions view over 1 MiB', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0 },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: PATH, upstreams: ['fx'] }],
    });
    const open = async () => {
      const r = await fetch(new URL(PATH, gw.base), { method: 'POST', headers: RAW_HEADERS, body: JSON.stringify(RAW_INIT) });
      assert.equal(r.status, 200, await r.text());
    };
    for (let i = 0; i < SESSIONS; i += 50) await Promise.all(Array.from({ length: 50 }, open));
  });
  after(() => gw.close());

  it('sends each view once to a console that opens, and keeps the stream', async () => {
    const admin = gw.app.adminUrl!;
    const { status, stream, body } = await events(admin, null);
    assert.equal(status, 200, body);
    try {
      await until('every view', () => stream!.seen.some((e) => e.event === 'pins'));
      const sessions = stream!.seen.filter((e) => e.event === 'sessions');
      assert.equal(sessions.length, 1, 'the sessions view once');
      assert.equal(sessions[0]!.data.items.length, CONSOLE_SESSIONS);
      assert.ok(sessions[0]!.data.nextCursor, 'more are open');
      assert.ok(JSON.stringify(sessions[0]!.data).length > 1 << 20, 'a view over 1 MiB');
      // The stream was kept: a change (a session ended) reaches it.
      const ended = await fetch(new URL(`/sessions/${sessions[0]!.data.items[0].id}`, admin), { method: 'DELETE' });
      assert.equal(ended.status, 200, await ended.text());
      await until('the new sessions view on the same stream', () => stream!.seen.filter((e) => e.event === 'sessions').length === 2);
      const [, again] = stream!.seen.filter((e) => e.event === 'sessions');
      assert.equal(again!.data.items.length, CONSOLE_SESSIONS);
      assert.ok(!again!.data.items.some((s: { id: string }) => s.id === sessions[0]!.data.items[0].id), 'the ended session left the view');
    } finally {
      stream!.close();
    }
  });
});
