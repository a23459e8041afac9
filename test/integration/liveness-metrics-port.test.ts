// The kubelet's liveness and startup probes asked /healthz on the MCP listener, which closes connections
// at accept once server.maxConnections are open (long-lived SSE streams, or a flood at the pod IP): the
// probe among them, so a healthy pod held at its cap failed liveness and was restarted, losing every
// session it held. The metrics listener (a port and a cap of its own) now answers GET /healthz as the MCP
// listener does, and the chart and manifests probe liveness there. Real gateway, real sockets, loopback.
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const CAP = 4;

/** A connection to the MCP port that made one request the front door let through (a ping without a session: 400), kept open. */
function hold(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    socket.on('error', () => {});
    socket.once('error', reject);
    socket.once('data', () => resolve(socket));
    socket.once('close', () => reject(new Error('the MCP listener closed a connection below its cap')));
    socket.once('connect', () =>
      socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
    );
  });
}

/** GET on a connection of its own, closed after the answer (fetch would keep one open on the MCP port, taking a place under the cap). */
function get(url: URL | string): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
    }).on('error', reject);
  });
}

/** A new connection to `port` asking GET /healthz: what it received, and whether the gateway closed it. */
function probe(port: number): { received: () => string; closed: () => boolean; socket: Socket } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  let closed = false;
  socket.on('data', (b) => (text += b.toString()));
  socket.on('error', () => {}); // a reset at accept is what the cap looks like from here
  socket.on('close', () => (closed = true));
  socket.once('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
  return { socket, received: () => text, closed: () => closed };
}

describe('liveness on the metrics port while the MCP listener is at server.maxConnections', { timeout: 30_000 }, () => {
  let gw: RunningGateway;
  const sockets: Socket[] = [];
  before(async () => {
    gw = await startGateway({
      // keepAliveMs well above the test: the held connections must not time out under it.
      server: { maxConnections: CAP, maxUnauthenticatedConnections: 2, keepAliveMs: 120_000 },
      auth: { mode: 'none' },
      metrics: { port: 0 },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await gw?.close();
  });

  it('answers GET /healthz on the metrics port with the MCP listener\'s answer', async () => {
    const mcp = await get(gw.url('/healthz'));
    const metrics = await get(new URL('/healthz', gw.app.metricsUrl!));
    assert.equal(mcp.status, 200);
    assert.deepEqual(metrics, mcp);
  });

  it('answers 200 there while a new connection to the MCP port is closed unanswered', async () => {
    const port = Number(new URL(gw.base).port);
    for (let i = 0; i < CAP; i++) sockets.push(await hold(port));
    const refused = probe(port);
    sockets.push(refused.socket);
    await until('the connection over the cap closed', () => refused.closed() || refused.received().length > 0);
    assert.equal(refused.received(), '', 'the MCP listener, at its cap, closes a new connection (the old liveness probe) without an answer');
    const live = await get(new URL('/healthz', gw.app.metricsUrl!));
    assert.equal(live.status, 200);
    assert.deepEqual(JSON.parse(live.body), { status: 'ok' });
    assert.ok(sockets.slice(0, CAP).every((s) => !s.destroyed), 'the held connections are still open');
  });

  it('metrics still answers at its own path', async () => {
    assert.equal((await get(gw.app.metricsUrl!)).status, 200);
  });
});
