// An upstream instance that restarts (its process crashed, or it forgot its session) is a new server: it
// knows no logging/setLevel, and sends what it chooses by default (the fixture: warnings and worse). The
// gateway never told it the level in force again, so a 2025 session that had asked for debug, or a
// 2026-07-28 standing whose requests had named debug (its upstream is set once, never again for the same
// level), got only warnings and errors from then on. Now a restarted instance is set to its level again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ALL_LEVELS as ALL, leveledLogUpstream, sessionLevels } from '../helpers/leveled-log-upstream.js';
import { MODERN_VERSION } from '../helpers/modern-http.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';
import type { UpstreamInstance } from '../../src/upstream/upstream-instance.js';

const upstream = (name: string, sharing: 'shared' | 'per-session') => leveledLogUpstream(name, sharing, { restart: { initialDelayMs: 10 } });

let nextId = 1;

/** The levels of the log messages a 2026-07-28 call of log_each on `path` gets. */
async function modernLevels(gw: RunningGateway, path: string, logLevel: string): Promise<string[]> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'log_each' };
  const _meta = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/logLevel': logLevel };
  const res = await fetch(gw.url(path), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'log_each', arguments: {}, _meta } }) });
  const body = await res.text();
  assert.equal(res.status, 200, body);
  const messages = (res.headers.get('content-type') ?? '').includes('event-stream') ? body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))) : [JSON.parse(body)];
  assert.equal(messages.at(-1)?.result?.content?.[0]?.text, 'logged', body);
  return messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.level as string);
}

/** Kills the process of the pool's instance in use and waits until a new one is ready. */
async function crash(gw: RunningGateway, name: string): Promise<void> {
  const pool = gw.app.gateway.pools.get(name)!;
  const inst = [...pool.instances].find((i: UpstreamInstance) => i.state === 'ready')!;
  const pid = inst.pid!;
  const restarts = inst.restarts;
  process.kill(pid, 'SIGKILL');
  await until('the upstream restarted', () => inst.restarts > restarts && inst.state === 'ready' && inst.pid !== pid);
}

describe('the log level in force, after an upstream instance restarts', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [upstream('own', 'per-session'), upstream('common', 'shared'), upstream('mown', 'per-session'), upstream('mcommon', 'shared')],
      endpoints: [
        { path: '/own', upstreams: ['own'] },
        { path: '/common', upstreams: ['common'] },
        { path: '/mown', upstreams: ['mown'] },
        { path: '/mcommon', upstreams: ['mcommon'] },
      ],
    });
  });
  after(() => gw.close());

  for (const path of ['/own', '/common']) {
    it(`${path}: a 2025 session that set debug still gets debug lines after its upstream restarted`, { timeout: 60_000 }, async () => {
      const client = await connectClient(gw, 'streamable-http', { path });
      try {
        await client.setLoggingLevel('debug');
        assert.deepEqual(await sessionLevels(client), ALL);
        await crash(gw, path.slice(1));
        assert.deepEqual(await sessionLevels(client), ALL, 'the restarted upstream was set to debug again');
      } finally {
        await client.close();
      }
    });
  }

  for (const path of ['/mown', '/mcommon']) {
    it(`${path}: a 2026-07-28 request naming debug still gets debug lines after its standing's upstream restarted`, { timeout: 60_000 }, async () => {
      assert.deepEqual(await modernLevels(gw, path, 'debug'), ALL);
      await crash(gw, path.slice(1));
      assert.deepEqual(await modernLevels(gw, path, 'debug'), ALL, 'the restarted upstream was set to debug again');
    });
  }
});
