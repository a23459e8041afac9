// A console's /events stream is checked again once a minute: a token that is refused ends it ("denied").
// A token that cannot be checked right now (the issuer's key set unreachable: the verifier rejects with
// status 503) is no refused token (found by a review): every open console was ended with "denied" during
// an identity provider's outage, as if its operator's token had been revoked. The stream now stays open
// and is checked again at the next minute. Real HTTP on a real port; only Date is mocked (the minute).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it, mock } from 'node:test';
import { AdminEvents } from '../../../src/admin/admin-events.js';
import type { AdminCredentials, AdminTarget } from '../../../src/admin/admin-target.js';
import { createLogger } from '../../../src/observability/logger.js';

function target(verifyJwt: AdminCredentials['verifyJwt']): AdminTarget {
  const none = async () => [];
  // A view that changes at each tick: its frame, sent after the re-check, shows the tick has reached the client.
  let tick = 0;
  return {
    replica: 'r1',
    credentials: () => ({ token: undefined, scope: 'switchboard:admin', verifyJwt }),
    sessions: async () => [{ tick: ++tick }],
    upstreams: none,
    tenants: none,
    pins: async () => undefined,
    tailAudit: () => undefined,
  } as unknown as AdminTarget;
}

/** AdminEvents served on a real port; the stream's text as it arrives. */
async function serve(events: AdminEvents): Promise<{ text: () => string; ended: Promise<void>; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    void events.open({ headers: req.headers } as never, { hijack: () => {}, raw: res } as never);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  let text = '';
  const ended = new Promise<void>((resolve) => {
    const req = http.get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/events', headers: { authorization: 'Bearer a.b.c' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', resolve);
      res.on('error', () => resolve());
    });
    req.on('error', () => resolve());
  });
  return {
    text: () => text,
    ended,
    close: () => (events.close(), server.closeAllConnections(), new Promise<void>((r) => server.close(() => r()))),
  };
}

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond(), what);
}

describe('admin /events: the minute re-check of a stream token', () => {
  afterEach(() => mock.timers.reset());

  it('keeps the stream while the token cannot be checked (503), and ends it once the token is refused', async () => {
    let answer: 'ok' | 'unavailable' | 'refused' = 'ok';
    const events = new AdminEvents(
      target(async () => {
        if (answer === 'unavailable') throw Object.assign(new Error("the issuer's key set cannot be fetched right now"), { status: 503 });
        if (answer === 'refused') throw Object.assign(new Error('the access token is invalid: it has expired'), { status: 401 });
        return new Set(['switchboard:admin']);
      }),
      createLogger('silent'),
    );
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const s = await serve(events);
    try {
      await until('the hello event', () => s.text().includes('event: hello'));
      answer = 'unavailable';
      mock.timers.tick(61_000);
      let ended = false;
      void s.ended.then(() => (ended = true));
      await events.poke();
      // Either the tick's sessions frame arrives (the stream goes on) or the stream ends (denied).
      await until('the tick to reach the client', () => ended || s.text().includes('"tick":2'));
      assert.ok(!ended && !s.text().includes('event: denied'), `not denied while the key set is down:\n${s.text()}`);
      answer = 'refused';
      mock.timers.tick(61_000);
      await events.poke();
      await s.ended;
      assert.match(s.text(), /event: denied\ndata: \{"status":401,/);
    } finally {
      await s.close();
    }
  });
});
