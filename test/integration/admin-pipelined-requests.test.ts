// An authenticated client on the admin port that pipelined HTTP/1.1 requests and never read the answers
// had every one of them answered at once (node's server emits a request for each pipelined message it
// reads): one write of thousands of `GET /config` rendered the config thousands of times and held every
// answer in the process. A connection now has one request answered at a time, the next only once the
// previous answer is written, and one that pipelines more than a few unanswered requests is closed (as
// the metrics port). Real listener on a real port, a raw socket, a counted render.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { startAdminServer } from '../../src/admin/admin-server.js';
import type { AdminTarget } from '../../src/admin/admin-target.js';
import { createLogger } from '../../src/observability/logger.js';
import { openRawSocket } from '../helpers/raw-socket.js';

const TOKEN = 'pipelined-admin-token-0123456789-abcdefghij';
const GET_CONFIG = `GET /config HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`;
/** Far more renders than one connection may cause once bounded (a few), far fewer than the flood. */
const TOO_MANY = 64;
/** A config of some size: what each answer held in the process weighs. */
const CONFIG = { upstreams: Array.from({ length: 200 }, (_, i) => ({ name: `upstream-${i}`, url: `https://example.test/${i}/mcp` })) };

describe('pipelined requests on the admin port', { timeout: 60_000 }, () => {
  let app: FastifyInstance;
  let port: number;
  let renders = 0;
  let tooMany: () => void = () => {};
  before(async () => {
    const target = {
      replica: 'r1',
      credentials: () => ({ token: TOKEN, scope: 'admin', verifyJwt: undefined }),
      config: () => {
        if (++renders > TOO_MANY) tooMany();
        return CONFIG;
      },
    } as unknown as AdminTarget;
    const started = await startAdminServer(target, createLogger('silent'), '127.0.0.1', 0);
    app = started.app;
    port = Number(new URL(started.url).port);
  });
  after(async () => {
    await app.close();
  });

  it('an authenticated client that pipelines thousands and never reads is closed after a few renders', async () => {
    renders = 0;
    const flood = await openRawSocket('127.0.0.1', port);
    flood.socket.pause(); // never read: the answers stay with the sender
    const closed = new Promise<'closed'>((r) => flood.socket.once('close', () => r('closed')));
    const flooded = new Promise<'rendered'>((r) => (tooMany = () => r('rendered')));
    flood.socket.write(GET_CONFIG.repeat(5000));
    const first = await Promise.race([closed, flooded]);
    flood.socket.destroy();
    assert.equal(first, 'closed', `the connection was closed before ${TOO_MANY} renders (renders: ${renders})`);
    assert.ok(renders <= 8, `a few renders at most, not one per pipelined request (renders: ${renders})`);
  });

  it('a client that pipelines a few requests and reads gets every answer, in order', async () => {
    const c = await openRawSocket('127.0.0.1', port);
    const unauthenticated = 'GET /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    c.socket.write(GET_CONFIG + unauthenticated + GET_CONFIG);
    await new Promise<void>((resolve, reject) => {
      c.socket.on('data', () => (c.received().match(/HTTP\/1\.1 \d+/g) ?? []).length === 3 && c.received().endsWith('}') && resolve());
      c.socket.once('close', () => reject(new Error(`closed after: ${c.received().slice(0, 200)}`)));
    });
    c.socket.destroy();
    assert.deepEqual(c.received().match(/HTTP\/1\.1 \d+/g), ['HTTP/1.1 200', 'HTTP/1.1 401', 'HTTP/1.1 200']);
  });

  it('requests are answered on a new connection after the flood', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/config`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), CONFIG);
  });
});
