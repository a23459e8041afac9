// A console stream refused while it was still opening (found by a review, 2026-12-07). With a view that
// cannot be computed (the store down), opening /events runs the views' tick a second time; when the admin
// credentials changed during the first (a rotated admin.tokenFile, a reload replacing admin.token), the
// second re-checks the new stream, refuses its token, writes "denied" and ends it. open() then went on to
// write the views to the ended response: Node emits ERR_STREAM_WRITE_AFTER_END on it, with no listener,
// and the whole gateway process exited. Real HTTP on a real port; the target is the gateway's interface.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { AdminEvents } from '../../../src/admin/admin-events.js';
import type { AdminTarget } from '../../../src/admin/admin-target.js';
import { createLogger } from '../../../src/observability/logger.js';

const OLD = 'the-old-admin-token-0123456789-abcdefgh';
const NEW = 'the-new-admin-token-0123456789-abcdefgh';

describe('admin /events: a stream refused while it opens', () => {
  it('is ended with "denied" and nothing is written after, the process goes on', async () => {
    let token = OLD;
    const none = async () => [];
    const target = {
      replica: 'r1',
      credentials: () => ({ token, scope: 'switchboard:admin', verifyJwt: undefined }),
      // The credentials change while the first tick computes the views.
      sessions: async () => ((token = NEW), []),
      upstreams: none,
      tenants: none,
      // The store is down: this view is missing after the first tick, so open() runs a second.
      pins: async () => {
        throw new Error('the shared store (redis) is unreachable');
      },
      tailAudit: () => undefined,
    } as unknown as AdminTarget;
    const events = new AdminEvents(target, createLogger('silent'));
    const failures: Error[] = [];
    const onError = (err: Error) => failures.push(err);
    process.on('uncaughtException', onError);
    const server = http.createServer((req, res) => {
      void events.open({ method: 'GET', headers: req.headers } as never, { hijack: () => {}, raw: res } as never);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/events', headers: { authorization: `Bearer ${OLD}` } }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve(body));
        });
        req.on('error', reject);
      });
      assert.match(text, /event: denied\ndata: \{"status":401,/);
      assert.doesNotMatch(text.slice(text.indexOf('event: denied')), /event: (sessions|upstreams|tenants)/, 'no view after the denial');
      // Whatever Node reports of a write after the end, it does so on a later turn.
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(failures.map((e) => e.message), []);
    } finally {
      process.off('uncaughtException', onError);
      events.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
