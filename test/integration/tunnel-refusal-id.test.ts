// A forward over the Redis tunnel refused with 503 (the owner ended it without an answer, the relaying
// replica stopped) answered a JSON-RPC error with `id: null` although the request's id was in its body:
// a client matches answers by id, and null is for a request that could not be read. Found by a review: the
// refusal carries the request's id (a batch's first request's, as the edge answers a batch it refuses whole);
// null only when no request id can be read.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Tunnel } from '../../src/cluster/tunnel.js';
import { TestTunnels, heldRuns } from '../helpers/test-tunnels.js';
import { once, waitFor } from '../helpers/wait.js';

/** The bodies the relay server forwards, by path, and the id each refusal must carry. */
const CASES: Record<string, { body: string; id: string | number | null }> = {
  '/string': { body: JSON.stringify({ jsonrpc: '2.0', id: 'call-7', method: 'tools/call', params: { name: 'x', arguments: {} } }), id: 'call-7' },
  '/number': { body: JSON.stringify({ jsonrpc: '2.0', id: 42, method: 'tools/list' }), id: 42 },
  '/batch': { body: JSON.stringify([{ jsonrpc: '2.0', method: 'notifications/progress', params: {} }, { jsonrpc: '2.0', id: 5, method: 'tools/list' }, { jsonrpc: '2.0', id: 6, method: 'ping' }]), id: 5 },
  '/notification': { body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }), id: null },
  '/unreadable': { body: '{"jsonrpc":"2.0","id":9,', id: null },
};

describe('a forward over the tunnel refused with 503 answers with the request id', { timeout: 60_000 }, () => {
  let net: TestTunnels;
  const servers: Server[] = [];

  before(async () => {
    net = await TestTunnels.start('refusalid:');
  });
  after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    await net?.stop();
  });

  async function relayServer(relay: Tunnel, owner: string): Promise<number> {
    const server = createServer((req, r) => {
      void relay.forward(owner, { method: 'POST', url: req.url!, headers: { 'content-type': 'application/json' }, body: CASES[req.url!]!.body }, () => r, 60_000, async () => true);
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  }

  async function refusal(res: Response): Promise<any> {
    const text = await res.text();
    assert.equal(res.status, 503, text);
    return JSON.parse(text);
  }

  it('when the owner ends the relay without an answer', async () => {
    const dispatch = async (): Promise<never> => {
      throw new Error('the run through the owner\'s routes was cut before its answer began');
    };
    const [owner, relay] = [net.open('owner', { dispatch }).t, net.open('relay', { dispatch }).t];
    await Promise.all([owner.start(), relay.start()]);
    await net.ready();
    const port = await relayServer(relay, 'owner');
    for (const [path, { id }] of Object.entries(CASES)) {
      const body = await refusal(await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', signal: AbortSignal.timeout(10_000) }));
      assert.equal(body.error?.code, -32000, JSON.stringify(body));
      assert.deepEqual(body.id, id, `${path}: ${JSON.stringify(body)}`);
    }
  });

  it('when the relaying replica stops while the owner holds the request', async () => {
    const runs = new Map<string, AbortSignal>();
    const [owner, relay] = [net.open('owner2', { dispatch: heldRuns(runs) }).t, net.open('relay2', { dispatch: heldRuns(new Map()) }).t];
    await Promise.all([owner.start(), relay.start()]);
    await net.ready();
    const port = await relayServer(relay, 'owner2');
    const paths = ['/string', '/batch'];
    const answers = paths.map((path) => fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', signal: AbortSignal.timeout(10_000) }));
    assert.ok(await waitFor(() => runs.size === paths.length), 'both reached the owner');
    relay.close();
    for (const [i, res] of (await Promise.all(answers)).entries()) {
      const body = await refusal(res);
      assert.deepEqual(body.id, CASES[paths[i]!]!.id, JSON.stringify(body));
    }
  });
});
