// The admin and metrics listeners' connection cap and deadlines, tested alike: a real gateway with the
// listener's cap at 4 and server.headersTimeoutMs at 3 s, real sockets.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from './gateway.js';
import { openRawSocket } from './raw-socket.js';
import { until } from './wait.js';

export interface ListenerUnderTest {
  /** The setting the warning names, `admin.maxConnections` or `metrics.maxConnections`. */
  setting: string;
  /** Config sections that turn the listener on with maxConnections 4. */
  config: Record<string, unknown>;
  url: (gw: RunningGateway) => string;
  /** A complete request the listener would answer, sent on the connection over the cap. */
  request: string;
  /** Whether the listener answers a request again. */
  answers: (gw: RunningGateway) => Promise<boolean>;
}

export function listenerLimitsSuite(title: string, l: ListenerUnderTest): void {
  const open = (gw: RunningGateway) => {
    const { hostname, port } = new URL(l.url(gw));
    return openRawSocket(hostname, Number(port));
  };
  describe(title, { timeout: 60_000 }, () => {
    let gw: RunningGateway;
    const logLines: string[] = [];
    const sockets: Socket[] = [];
    before(async () => {
      const config = { server: { headersTimeoutMs: 3000 }, ...l.config, upstreams: [{ name: 'fx', transport: 'stdio' as const, ...FIXTURE }], endpoints: [{ path: '/mcp', upstreams: ['fx'] }] };
      gw = await startGateway(config, { logLines });
    });
    after(async () => {
      for (const s of sockets) s.destroy();
      await gw?.close();
    });

    it(`a connection beyond ${l.setting} is closed unanswered, and logged`, async () => {
      const holders = await Promise.all([1, 2, 3, 4].map(() => open(gw)));
      sockets.push(...holders.map((h) => h.socket));
      const extra = await open(gw);
      sockets.push(extra.socket);
      extra.socket.write(l.request);
      await until('the fifth connection closed', () => extra.closed() || extra.received().length > 0);
      assert.equal(extra.received(), '', 'no answer on the connection over the cap');
      assert.ok(logLines.some((line) => line.includes('"level":40') && line.includes(l.setting)), 'a warning names the setting');
      for (const h of holders) h.socket.destroy();
      // Room again once they are gone.
      await until('an answer again', () => l.answers(gw));
    });

    it('a silent connection is closed after server.headersTimeoutMs, not node default 60 s', async () => {
      const silent = await open(gw);
      sockets.push(silent.socket);
      // 3 s configured; node's own default would keep it past this bound.
      await until('the silent connection closed', () => silent.closed(), 20_000);
    });
  });
}
