import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { once } from 'node:events';
import { Agent } from 'undici';
import type { RemoteUpstreamConfig } from '../../../src/config/schema.js';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StreamableHttpClientTransport } from '../../../src/upstream/streamable-http-client.js';
import { realClock } from '../../../src/upstream/pace-clock.js';
import { getStreamUpstream, initializedTransport, remoteConfig } from '../../helpers/get-stream-upstream.js';

const logger = createLogger('silent');

/** A Streamable HTTP upstream whose first GET stream sends one event and then breaks its connection. */
function startUpstream(): { server: Server; gets: Array<string | undefined> } {
  const gets: Array<string | undefined> = [];
  const server = createServer((req: IncomingMessage, res) => {
    if (req.method === 'GET') {
      gets.push(req.headers['last-event-id'] as string | undefined);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      if (gets.length > 1) return; // the reconnected stream stays open
      res.write(`id: 0_7\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`, () => res.socket?.destroy());
      return;
    }
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.id === undefined) return void res.writeHead(202, { 'mcp-session-id': 's1' }).end();
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } } }));
    });
  });
  return { server, gets };
}

describe('StreamableHttpClientTransport: the GET stream', () => {
  let up: ReturnType<typeof startUpstream>;
  let url: string;
  const agent = new Agent();
  before(async () => {
    up = startUpstream();
    up.server.listen(0, '127.0.0.1');
    await once(up.server, 'listening');
    url = `http://127.0.0.1:${(up.server.address() as AddressInfo).port}/mcp`;
  });
  after(async () => {
    up.server.closeAllConnections();
    up.server.close();
    await agent.close();
  });

  it('a stream that breaks is resumed from the last event it delivered', async () => {
    const cfg = { name: 'u', url, headers: {}, http: { headersTimeoutMs: 5000, bodyTimeoutMs: 5000, maxMessageBytes: 1 << 20 } } as unknown as RemoteUpstreamConfig;
    const t = new StreamableHttpClientTransport(cfg, agent, undefined, logger);
    const received: JsonRpcMessage[] = [];
    t.onmessage = (m) => received.push(m);
    try {
      await t.start();
      await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' }); // resolves once the GET stream is confirmed
      for (let i = 0; i < 200 && up.gets.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
      assert.deepEqual(up.gets, [undefined, '0_7']);
      assert.deepEqual(received.map((m) => ('method' in m ? m.method : 'response')), ['response', 'notifications/tools/list_changed']);
    } finally {
      await t.close();
    }
  });
});

describe('StreamableHttpClientTransport: closed while its GET stream is confirmed', () => {
  it('the notifications/initialized waiting on the confirmation fails, and does not hang (found by a review)', async () => {
    let getArrived!: () => void;
    const arrived = new Promise<void>((r) => (getArrived = r));
    // An upstream that answers initialize and never answers the GET (its headers never come).
    const server = createServer((req: IncomingMessage, res) => {
      if (req.method === 'GET') return void getArrived();
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const m = JSON.parse(body) as { id?: number };
        if (m.id === undefined) return void res.writeHead(202, { 'mcp-session-id': 's2' }).end();
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's2' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'u', version: '1' } } }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const agent = new Agent();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const cfg = { name: 'u', url, headers: {}, http: { headersTimeoutMs: 30_000, bodyTimeoutMs: 30_000, maxMessageBytes: 1 << 20 } } as unknown as RemoteUpstreamConfig;
    const t = new StreamableHttpClientTransport(cfg, agent, undefined, logger);
    try {
      await t.start();
      await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      const initialized = t.send({ jsonrpc: '2.0', method: 'notifications/initialized' }).then(
        () => 'confirmed',
        () => 'failed',
      );
      await arrived;
      await t.close();
      const outcome = await Promise.race([initialized, new Promise((r) => setTimeout(r, 5000, 'still waiting'))]);
      assert.equal(outcome, 'failed');
    } finally {
      server.closeAllConnections();
      server.close();
      await agent.close();
    }
  });
});

describe('StreamableHttpClientTransport: a GET stream that brings nothing each time it is opened (found by a review)', () => {
  // Each GET is answered 200 and ended at once, empty, or with one event over maxMessageBytes that every
  // resume replays. Reconnected 250 ms after each such stream, for ever (and the event read in full each time).
  for (const [what, body] of [
    ['ended at once, empty', ''],
    ['ended after an event over maxMessageBytes', `id: 1\ndata: ${'x'.repeat(70 * 1024)}\n\n`],
  ] as const) {
    it(`${what}: it is reopened after a wait that doubles each time, not every 250 ms`, async () => {
      const gets: number[] = [];
      const { server, url } = await getStreamUpstream((_req, res) => {
        gets.push(performance.now());
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' }).end(body);
      });
      const agent = new Agent();
      const cfg = remoteConfig(url);
      const t = new StreamableHttpClientTransport(cfg, agent, undefined, logger);
      try {
        await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
        await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        for (let i = 0; i < 400 && gets.length < 5; i++) await new Promise((r) => setTimeout(r, 25));
        assert.equal(gets.length, 5);
        // The waits: 250, 500, 1000, 2000 ms (timers fire no earlier than asked; a little slack for rounding).
        const gaps = gets.slice(1).map((at, i) => at - gets[i]!);
        assert.ok(gaps[3]! >= 1900, `reopened after ${gaps.map(Math.round).join(', ')} ms`);
      } finally {
        await t.close();
        server.closeAllConnections();
        server.close();
        await agent.close();
      }
    });
  }
});

describe('StreamableHttpClientTransport: a GET stream a proxy cuts, idle, each time before 30 s (found by a review)', () => {
  // AWS API Gateway ends idle streams at 29 s: on a quiet session each GET stream lives 29 s and brings
  // nothing. Its waits climbed to the 30 s maximum and stayed there: the stream was closed half the time.
  // The transport's clock is injected: each stream lives 29 s by it (the server ends it at once).
  it('is opened again soon after each cut, not after waits that climb to 30 s', async () => {
    let gets = 0;
    const { server, url } = await getStreamUpstream((_req, res) => void (gets++, res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' }).end()));
    const agent = new Agent();
    const cfg = remoteConfig(url);
    let clock = 0;
    const t = new StreamableHttpClientTransport(cfg, agent, undefined, logger, { ...realClock, now: () => (clock += 29_000) });
    try {
      await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
      await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      // 8 streams: after waits of 250 ms each some 2 s; after waits doubling from 250 ms, more than a minute.
      for (let i = 0; i < 600 && gets < 8; i++) await new Promise((r) => setTimeout(r, 25));
      assert.equal(gets, 8, `${gets} GET streams opened in 15 s`);
    } finally {
      await t.close();
      server.closeAllConnections();
      server.close();
      await agent.close();
    }
  });
});

describe('StreamableHttpClientTransport: an event over maxMessageBytes on the GET stream (found by a review)', () => {
  // The upstream replays from Last-Event-ID: a stream resumed from before the oversized event (id 1)
  // brings it again, every time. Its id was never taken, so every reconnect replayed it and the
  // upstream's notifications after it never came, with waits growing to 30 s.
  it('is skipped (its id taken, one warning), and the notifications after it arrive', async () => {
    const gets: Array<string | undefined> = [];
    const note = (id: number) => `id: ${id}\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`;
    const up = await getStreamUpstream((req, res) => {
      const from = req.headers['last-event-id'] as string | undefined;
      gets.push(from);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      if (from === '1') return void res.write(note(2)); // past it: the next event, the stream kept open
      res.end(`id: 1\ndata: ${'x'.repeat(70 * 1024)}\n\n`); // replayed from the start, then ended
    });
    const warnings: string[] = [];
    const log = createLogger('debug', { write: (line: string) => void (line.includes('maxMessageBytes') && warnings.push(line)) });
    const { received, close } = await initializedTransport(up, log);
    try {
      for (let i = 0; i < 200 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
      assert.deepEqual(received.map((m) => ('method' in m ? m.method : 'response')), ['response', 'notifications/tools/list_changed']);
      assert.deepEqual(gets, [undefined, '1']);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /"eventId":"1"/);
    } finally {
      await close();
    }
  });
});

describe('StreamableHttpClientTransport: invalid messages on an SSE stream', () => {
  // Each was a warning of its own, at whatever rate the upstream sent them: "data: x" and a blank line,
  // 9 bytes, made a warning of some 250 bytes, without bound (a stdio server's junk lines are held to
  // 10 warnings a second, burst 100).
  it('are warned about at a bounded rate, the rest counted in one warning', async () => {
    const INVALID = 2000;
    const up = await getStreamUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      res.write('data: x\n\n'.repeat(INVALID));
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
    });
    const lines: string[] = [];
    const log = createLogger('debug', { write: (line: string) => void lines.push(line) });
    const { received, close } = await initializedTransport(up, log);
    try {
      for (let i = 0; i < 400 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
      assert.equal(received.length, 2, 'the notification after them arrived');
    } finally {
      await close();
    }
    const warnings = lines.map((l) => JSON.parse(l) as { level: number; msg: string; dropped?: number }).filter((l) => l.level === 40);
    const each = warnings.filter((w) => w.dropped === undefined);
    // A burst of 100, then 10 a second: far fewer than the messages, whatever time the test takes.
    assert.ok(each.length < INVALID / 10, `${each.length} warnings for ${INVALID} invalid messages`);
    assert.equal(each.length + warnings.reduce((n, w) => n + (w.dropped ?? 0), 0), INVALID, 'every invalid message is warned about or counted');
  });
});
