// An open console stream (GET /events) was checked again once a minute only (found by a review,
// 2026-12-07): after an operator replaced a leaked admin.token (a reload) or rotated admin.tokenFile, a
// console signed in with the old token went on receiving every view (sessions, upstreams, pins) and the
// audit tail for up to a minute. A change of the admin credentials now re-checks every stream at the next
// tick, before any view is sent. Real gateway from a real file, real HTTP on real ports.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { events, type Events } from '../helpers/admin-events.js';
import { fileGateway, tokenFileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { openSession } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const OLD = 'the-leaked-admin-token-0123456789-abcdef';
const NEW = 'the-replacement-admin-token-0123456789-xyz';

function doc(token: string): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    admin: { enabled: true, host: '127.0.0.1', port: 0, token },
    upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
    endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
  };
}

/** Whether the stream was sent a sessions view listing `sid`. */
const lists = (stream: Events, sid: string) => stream.seen.some((e) => e.event === 'sessions' && e.data.items.some((s: { id: string }) => s.id === sid));

/**
 * After the credentials changed: a session opened (the sessions view changes), then whichever comes first,
 * the denial or that view. The view must not come: the old token no longer opens the API.
 */
async function deniedBeforeNextView(stream: Events, open: () => Promise<string>): Promise<void> {
  const sid = await open();
  await until('the stream is denied, or sent the new session', () => stream.seen.some((e) => e.event === 'denied') || lists(stream, sid));
  assert.ok(!lists(stream, sid), 'a console signed in with the replaced token was sent the session opened after the change');
  assert.equal(stream.seen.find((e) => e.event === 'denied')?.data.status, 401);
}

describe('console streams after the admin credentials change', () => {
  let fg: FileGateway;
  before(async () => (fg = await fileGateway('swb-admin-events-creds-', doc(OLD))));
  after(() => fg?.close());

  it('a reload that replaces admin.token ends the streams signed in with the old one before they get another view', async () => {
    const { status, stream } = await events(fg.app.adminUrl!, OLD);
    assert.equal(status, 200);
    try {
      await until('the views on connect', () => stream!.seen.some((e) => e.event === 'sessions'));
      fg.write(doc(NEW));
      const reload = await fetch(new URL('/reload', fg.app.adminUrl!), { method: 'POST', headers: { authorization: `Bearer ${OLD}` } });
      assert.equal(reload.status, 200);
      assert.equal(((await reload.json()) as { result: string }).result, 'applied');
      await deniedBeforeNextView(stream!, () => openSession(fg.gw, 'unused'));
      assert.equal((await events(fg.app.adminUrl!, NEW)).status, 200, 'the new token opens a stream');
    } finally {
      stream?.close();
    }
  });
});

describe('console streams after admin.tokenFile is rotated', () => {
  it('end for the old token before they get another view', async () => {
    const s = await tokenFileGateway('swb-admin-events-rotate-', `${OLD}\n`, []);
    const { status, stream } = await events(s.gw.app.adminUrl!, OLD);
    try {
      assert.equal(status, 200);
      await until('the views on connect', () => stream!.seen.some((e) => e.event === 'sessions'));
      writeFileSync(s.file, `${NEW}\n`);
      await deniedBeforeNextView(stream!, () => openSession(s.gw, 'unused'));
    } finally {
      stream?.close();
      await s.close();
    }
  });
});
