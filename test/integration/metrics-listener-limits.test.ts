// The metrics listener (Prometheus /metrics, a port of its own) kept node's defaults after the admin
// listener got its limits: it took any number of connections and kept a silent one about 60 s (node's
// headers deadline, checked every 30 s), so anyone reaching the port could hold connections until the
// process ran out of file descriptors, which the MCP listener shares. It now closes connections beyond
// metrics.maxConnections at accept (logged) and applies the MCP listener's deadlines
// (server.headersTimeoutMs, server.bodyTimeoutMs). Real gateway, real sockets.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

/** A connection to the metrics port, with what it received and whether it closed. */
function open(url: string): Promise<{ socket: Socket; received: () => string; closed: () => boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    let closed = false;
    socket.on('data', (b) => (text += b.toString()));
    socket.on('error', () => {}); // a reset at accept is what the cap looks like from here
    socket.on('close', () => (closed = true));
    socket.once('connect', () => resolve({ socket, received: () => text, closed: () => closed }));
    socket.once('error', reject);
  });
}

describe('metrics listener limits', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let logLines: string[];
  const sockets: Socket[] = [];
  before(async () => {
    logLines = [];
    gw = await startGateway(
      {
        server: { headersTimeoutMs: 3000 },
        metrics: { port: 0, maxConnections: 4 },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines },
    );
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await gw?.close();
  });

  it('a connection beyond metrics.maxConnections is closed unanswered, and logged', async () => {
    const holders = await Promise.all([1, 2, 3, 4].map(() => open(gw.app.metricsUrl!)));
    sockets.push(...holders.map((h) => h.socket));
    const extra = await open(gw.app.metricsUrl!);
    sockets.push(extra.socket);
    extra.socket.write('GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await until('the fifth connection closed', () => extra.closed() || extra.received().length > 0);
    assert.equal(extra.received(), '', 'no answer on the connection over the cap');
    assert.ok(logLines.some((l) => l.includes('"level":40') && l.includes('metrics.maxConnections')), 'a warning names the setting');
    for (const h of holders) h.socket.destroy();
    // Room again once they are gone.
    await until('a scrape answered again', async () => (await fetch(gw.app.metricsUrl!).catch(() => undefined))?.status === 200);
  });

  it('a silent connection is closed after server.headersTimeoutMs, not node default 60 s', async () => {
    const silent = await open(gw.app.metricsUrl!);
    sockets.push(silent.socket);
    // 3 s configured; node's own default would keep it past this bound.
    await until('the silent connection closed', () => silent.closed(), 20_000);
  });
});
