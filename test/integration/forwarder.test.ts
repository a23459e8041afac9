// Forwarder between two replicas over real HTTP on loopback and a real redis-server, without the rest of
// the gateway: a "front" server hands each client request to one replica's Forwarder, whose owner is
// a loopback server standing for the other replica.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { Forwarder } from '../../src/cluster/forwarder.js';
import { connectRedis } from '../../src/cluster/redis-connection.js';
import type { Tunnel } from '../../src/cluster/tunnel.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const PREFIX = 'forwarder-test:';
const logger = createLogger('silent');
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } });

async function listen(handler: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let s = '';
    req.on('data', (b: Buffer) => (s += b.toString()));
    req.on('end', () => resolve(s));
  });
}

/** A replica's Forwarder on its own Redis connection; the tunnel is never reached in these tests. */
function forwarder(redis: Redis, me: string): Forwarder {
  return new Forwarder({
    redis,
    prefix: PREFIX,
    me,
    secret: undefined,
    secretTtlMs: 60_000,
    timeoutMs: 5000,
    logger,
    observer: undefined,
    tunnel: () => ({ mark: 'not-a-client-value' }) as unknown as Tunnel,
    gone: async () => new Set(),
    alive: async () => true,
    beat: () => {},
  });
}

/** Sends one POST through `from` to the owner `to` (at `ownerUrl`); resolves to the owner's answer as the client gets it. */
async function through(from: Forwarder, to: string, ownerUrl: string, body = CALL): Promise<{ status: number; headers: Headers; text: string }> {
  from.learn(to, ownerUrl);
  const front = await listen((req: IncomingMessage, res: ServerResponse) => {
    void readBody(req).then((b) => from.forward(to, { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', 'mcp-session-id': 's1' }, body: b }, () => res));
  });
  try {
    const r = await fetch(`${front.url}/mcp`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    return { status: r.status, headers: r.headers, text: await r.text() };
  } finally {
    front.server.closeAllConnections();
    front.server.close();
  }
}

/** An owner that answers whether `replica` believes the request forwarded (its signature verifies). */
function believer(replica: Forwarder): RequestListener {
  return (req, res) => {
    void readBody(req).then((body) => {
      const ok = replica.forwarded({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end(ok ? 'forwarded' : 'client');
    });
  };
}

describe('Forwarder', { timeout: 60_000 }, () => {
  let redis: TestRedis;
  const links: Redis[] = [];
  const link = () => {
    const r = connectRedis(redis.url, logger);
    links.push(r);
    return r;
  };
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const r of links) r.disconnect();
    await redis?.stop();
  });

  it('replicas that loaded different shared secrets (Redis lost its data between) come to verify each other', async () => {
    const a = forwarder(link(), 'A');
    const b = forwarder(link(), 'B');
    await a.start();
    const admin = new Redis(redis.url);
    links.push(admin);
    await admin.flushall();
    await b.start();
    const atA = await listen(believer(a));
    const atB = await listen(believer(b));
    try {
      // Each forward that is not believed is a signal to re-read the secret; bounded, a few seconds at most.
      const aToB = await waitFor(async () => (await through(a, 'B', atB.url)).text === 'forwarded', { timeoutMs: 10_000, intervalMs: 300 });
      assert.ok(aToB, 'a forward signed by A is believed by B');
      const bToA = await waitFor(async () => (await through(b, 'A', atA.url)).text === 'forwarded', { timeoutMs: 10_000, intervalMs: 300 });
      assert.ok(bToA, 'a forward signed by B is believed by A');
      assert.equal((await through(a, 'B', atB.url)).text, 'forwarded', 'and A to B still');
    } finally {
      for (const s of [atA, atB]) {
        s.server.closeAllConnections();
        s.server.close();
      }
      await a.close();
      await b.close();
    }
  });

  it('a live owner whose connection breaks after it got a tools/call: no invitation to send it again', async () => {
    const a = forwarder(link(), 'A');
    await a.start();
    // Takes the whole request, then the connection breaks before any answer: it may have run the call.
    const owner = await listen((req) => void readBody(req).then(() => req.socket.destroy()));
    try {
      const call = await through(a, 'B', owner.url);
      assert.equal(call.status, 503);
      assert.equal(call.headers.get('retry-after'), null, 'no Retry-After for a call that may have taken effect');
      assert.match(call.text, /may have taken effect/);
      // What is harmless twice is still worth a retry.
      const list = await through(a, 'B', owner.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
      assert.equal(list.status, 503);
      assert.equal(list.headers.get('retry-after'), '1');
    } finally {
      owner.server.closeAllConnections();
      owner.server.close();
      await a.close();
    }
  });
});
