// A request forwarded over the Redis tunnel that the owner could not run to an answer (its run through
// its own routes failed or was cut before a response began: its inbox link dropped, the relay told it to
// stop): the owner sends the end of the relay with no head. The relaying replica ended its client's
// response there, an empty 200, which a client reads as an answer it cannot parse. Found by a review:
// it is answered 503 now, as every other relay that gets no answer.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Redis } from 'ioredis';
import { after, before, describe, it } from 'node:test';
import { Tunnel } from '../../src/cluster/tunnel.js';
import { TestTunnels } from '../helpers/test-tunnels.js';
import { once } from '../helpers/wait.js';

describe('a forward the owner ends without an answer', { timeout: 60_000 }, () => {
  let net: TestTunnels;
  let server: Server;
  let hang = false;

  /** Each replica's subscriber connection, by name. */
  const subs = new Map<string, Redis>();

  function tunnel(me: string): Tunnel {
    const dispatch = async (): Promise<never> => {
      if (hang) return new Promise<never>(() => {}); // frozen: it has the request and never answers
      throw new Error('the run through the owner\'s routes was cut before its answer began');
    };
    const { t, sub } = net.open(me, { dispatch });
    subs.set(me, sub);
    return t;
  }

  before(async () => {
    net = await TestTunnels.start('noanswer:');
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await net?.stop();
  });

  it('is answered 503 (a JSON-RPC error), not an empty 200', async () => {
    const [owner, relay] = [tunnel('owner'), tunnel('relay')];
    await Promise.all([owner.start(), relay.start()]);
    await net.ready();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } });
    server = createServer((_req, r) => {
      void relay.forward('owner', { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, body }, () => r, 5000, async () => true);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const res = await fetch(`http://127.0.0.1:${port}/mcp`, { signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    assert.equal(res.status, 503, `answered ${res.status}: ${JSON.stringify(text)}`);
    assert.match(text, /"error"/);
  });

  it('taken by an owner that then fell silent (its heartbeat lapsed): a tools/call is not invited back, a tools/list is', async () => {
    hang = true;
    const [owner, relay] = [tunnel('owner2'), tunnel('relay2')];
    await Promise.all([owner.start(), relay.start()]);
    await net.ready();
    const bodies: Record<string, string> = {
      '/call': JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } }),
      '/list': JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    };
    const silent = createServer((req, r) => {
      void relay.forward('owner2', { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, body: bodies[req.url!] }, () => r, 200, async () => false);
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const port = (silent.address() as { port: number }).port;
    try {
      const call = await fetch(`http://127.0.0.1:${port}/call`, { signal: AbortSignal.timeout(10_000) });
      const text = await call.text();
      assert.equal(call.status, 503, text);
      assert.equal(call.headers.get('retry-after'), null, `a tools/call the silent owner holds is invited back: ${text}`);
      assert.match(text, /may have taken effect/);
      const list = await fetch(`http://127.0.0.1:${port}/list`, { signal: AbortSignal.timeout(10_000) });
      assert.equal(list.status, 503, await list.text());
      assert.ok(list.headers.get('retry-after'));
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('taken by the owner when the relaying replica\'s link to Redis drops: a tools/call is not invited back, a tools/list is', async () => {
    hang = true;
    const [owner, relay] = [tunnel('owner3'), tunnel('relay3')];
    const relaySub = subs.get('relay3')!;
    await Promise.all([owner.start(), relay.start()]);
    await net.ready();
    const answers: Array<Promise<Response>> = [];
    let forwarded = 0;
    const lossy = createServer((req, r) => {
      const body = req.url === '/call' ? { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } } : { jsonrpc: '2.0', id: 2, method: 'tools/list' };
      void relay.forward('owner3', { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, () => r, 60_000, async () => true).then(() => forwarded++);
    });
    lossy.listen(0, '127.0.0.1');
    await once(lossy, 'listening');
    const port = (lossy.address() as { port: number }).port;
    try {
      for (const path of ['/call', '/list']) answers.push(fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) }));
      for (let i = 0; i < 200 && forwarded < 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(forwarded, 2, 'both went out to the owner');
      relaySub.disconnect(); // the link that carries the answers back is lost
      const [call, list] = await Promise.all(answers);
      const text = await call.text();
      assert.equal(call.status, 503, text);
      assert.equal(call.headers.get('retry-after'), null, `a tools/call the owner holds is invited back: ${text}`);
      assert.match(text, /may have taken effect/);
      assert.equal(list.status, 503, await list.text());
      assert.ok(list.headers.get('retry-after'));
    } finally {
      lossy.closeAllConnections();
      lossy.close();
    }
  });
});
