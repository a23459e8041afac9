// A listener on `localhost` is two servers: Fastify listens on the first address (127.0.0.1) and opens a
// second server for ::1. The connection caps were set on the first alone: the MCP listener's
// server.maxConnections and its unauthenticated-connection count, and admin.maxConnections, went
// uncounted on ::1, so a client there held any number of connections. Every server now counts against one
// cap per listener. The metrics listener (plain node:http) listens on one address only.
//
// This machine's /etc/hosts may name only 127.0.0.1 for localhost (most name ::1 too): the test answers
// `localhost` with both, as those do, when asked for every address; the sockets are real, over ::1.
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { connect } from 'node:net';
import { openRawSocket as open, type RawConnection as Conn } from '../helpers/raw-socket.js';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'localhost-admin-token-0123456789-abcdefghij';

const portOf = (url: string): number => Number(new URL(url).port);
const hasIpv6Loopback = await new Promise<boolean>((resolve) => {
  const s = connect(1, '::1').on('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  s.on('connect', () => (s.destroy(), resolve(true)));
});

describe('listeners on localhost: one cap over 127.0.0.1 and ::1', { timeout: 90_000, skip: hasIpv6Loopback ? false : 'no IPv6 loopback on this machine' }, () => {
  let gw: RunningGateway;
  let logLines: string[];
  const conns: Conn[] = [];
  const lookup = dns.lookup;
  before(async () => {
    // Fastify asks for every address of localhost; this machine's hosts file may name only 127.0.0.1.
    dns.lookup = ((host: string, options: unknown, cb: unknown) => {
      if (host === 'localhost' && typeof options === 'object' && options && (options as { all?: boolean }).all && typeof cb === 'function') {
        return void process.nextTick(cb as () => void, null, [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
      }
      return (lookup as (...a: unknown[]) => void)(host, options, cb);
    }) as typeof dns.lookup;
    logLines = [];
    gw = await startGateway(
      {
        server: { host: 'localhost', maxConnections: 4, maxUnauthenticatedConnections: 3 },
        auth: { mode: 'none' },
        admin: { enabled: true, host: 'localhost', port: 0, token: TOKEN, maxConnections: 4 },
        metrics: { host: 'localhost', port: 0 },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines },
    );
  });
  after(async () => {
    dns.lookup = lookup;
    for (const c of conns) c.socket.destroy();
    await gw?.close();
  });

  /** `n` connections alternating 127.0.0.1 and ::1, each answered once and kept alive. */
  async function holders(port: number, n: number, request: string): Promise<Conn[]> {
    const out: Conn[] = [];
    for (let i = 0; i < n; i++) {
      const c = await open(i % 2 === 0 ? '127.0.0.1' : '::1', port);
      conns.push(c);
      c.socket.write(request);
      await until(`holder ${i} answered`, () => c.received().includes('\r\n\r\n'));
      assert.ok(!/^connection: close/im.test(c.received()), `holder ${i} kept alive`);
      out.push(c);
    }
    return out;
  }

  async function refusedOver(host: string, port: number, request: string): Promise<void> {
    const extra = await open(host, port);
    conns.push(extra);
    extra.socket.write(request);
    await until(`the connection over the cap (${host}) closed or answered`, () => extra.closed() || extra.received().length > 0);
    assert.ok(extra.received() === '', `answered over ${host} past the cap (${extra.received().split('\r\n')[0]}): the cap must count both servers`);
  }

  it('the MCP listener: server.maxConnections counts connections over both addresses', async () => {
    const port = portOf(gw.base);
    // An MCP route's request passes the front door (auth none): the connection counts as authenticated.
    const get = `GET /mcp HTTP/1.1\r\nhost: localhost:${port}\r\naccept: text/event-stream\r\n\r\n`;
    const held = await holders(port, 4, get);
    await refusedOver('::1', port, get);
    await refusedOver('127.0.0.1', port, get);
    const scrape = await (await fetch(gw.app.metricsUrl!)).text();
    assert.match(scrape, /switchboard_connections_refused_total\{reason="max_connections"\} [1-9]/);
    assert.match(scrape, /switchboard_connections_open\{state="authenticated"\} 4/, 'the ::1 connections are counted');
    for (const h of held) h.socket.destroy();
  });

  it('the admin listener: admin.maxConnections counts connections over both addresses', async () => {
    const port = portOf(gw.app.adminUrl!);
    const get = `GET /openapi.json HTTP/1.1\r\nhost: localhost:${port}\r\nauthorization: Bearer ${TOKEN}\r\n\r\n`;
    const held = await holders(port, 4, get);
    await refusedOver('::1', port, get);
    await refusedOver('127.0.0.1', port, get);
    assert.ok(logLines.some((l) => l.includes('"level":40') && l.includes('admin.maxConnections')), 'a warning names the setting');
    for (const h of held) h.socket.destroy();
  });

  it('a silent connection over ::1 is closed after server.headersTimeoutMs, on the MCP and admin listeners', async () => {
    const silent = [await open('::1', portOf(gw.base)), await open('::1', portOf(gw.app.adminUrl!))];
    conns.push(...silent);
    // 10 s by default; node's own default would keep them past this bound.
    await until('the silent connections closed', () => silent.every((c) => c.closed()), 40_000);
  });

  it('the metrics listener opens one server only (node resolves localhost to one address), so its cap covers it', async () => {
    const url = new URL(gw.app.metricsUrl!);
    const other = url.hostname === '127.0.0.1' ? '::1' : '127.0.0.1';
    await assert.rejects(open(other, Number(url.port)), { code: 'ECONNREFUSED' });
  });
});
