import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '../../src/observability/logger.js';
import { StdioTransport } from '../../src/upstream/stdio-transport.js';
import { UpstreamClient } from '../../src/upstream/upstream-client.js';
import { everythingUpstream, startGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { waitFor, withClockAhead } from '../helpers/wait.js';

const unruly = (name: string, args: string[] = [], extra: Record<string, unknown> = {}) => ({
  name,
  transport: 'stdio' as const,
  sandbox: 'none' as const,
  command: process.execPath,
  args: ['test/fixtures/unruly-server.mjs', ...args],
  restart: { initialDelayMs: 50, maxDelayMs: 200, resetAfterMs: 60_000 },
  ...extra,
});

describe('upstream failure modes', () => {
  it('a command that cannot be started does not stop the gateway from listening; calls get a clear error', async () => {
    const gw = await startGateway({
      upstreams: [{ name: 'missing', transport: 'stdio', sandbox: 'none', command: '/nonexistent/surely-not-a-binary', restart: { initialDelayMs: 50, maxDelayMs: 100 } }],
      endpoints: [{ path: '/mcp', upstreams: ['missing'] }],
    });
    try {
      const ready = await fetch(new URL('/readyz', gw.base));
      assert.equal(ready.status, 503);
      await ready.text();
      const client = await connectClient(gw, 'streamable-http');
      await assert.rejects(client.callTool({ name: 'x', arguments: {} }), (err: unknown) => err instanceof McpError && /upstream "missing"/.test(err.message));
      await client.close();
    } finally {
      await gw.close();
    }
  });

  it('a per-session spare that fails to start is released: the pool does not fill up with dead instances', async () => {
    const gw = await startGateway({
      upstreams: [unruly('dies', ['--exit-at-once'], { sharing: 'per-session', pool: { warm: 1, max: 2, queue: 0 } })],
      endpoints: [{ path: '/mcp', upstreams: ['dies'] }],
    });
    try {
      for (let i = 0; i < 4; i++) await assert.rejects(connectClient(gw, 'streamable-http'));
      const pool = gw.app.gateway.pools.get('dies')!;
      assert.ok(pool.instances.size <= 1, `instances left: ${pool.instances.size}`);
      assert.equal([...pool.instances].filter((i) => i.dedicatedTo).length, 0);
      assert.equal(gw.app.gateway.registry.size, 0);
    } finally {
      await gw.close();
    }
  });

  it('an aggregated list leaves out an upstream that is down and serves the others', async () => {
    const gw = await startGateway({
      upstreams: [everythingUpstream('everything', 'shared'), unruly('down', ['--exit-at-once'])],
      endpoints: [{ path: '/mcp', upstreams: ['everything', 'down'] }],
    });
    try {
      const client = await connectClient(gw, 'streamable-http');
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'everything__echo'));
      assert.ok(!tools.some((t) => t.name.startsWith('down__')));
      await client.close();
    } finally {
      await gw.close();
    }
  });

  it('reads an answer written just before the upstream exits', async () => {
    const logger = createLogger('silent');
    const t = new StdioTransport({ command: process.execPath, args: ['test/fixtures/unruly-server.mjs'], env: { PATH: process.env.PATH! }, maxLineBytes: 1 << 24, logger });
    const client = new UpstreamClient('unruly', t, logger, { resolveCaller: () => undefined, onNotification: () => {} });
    await t.start();
    await client.initialize(5000);
    const r = await client.request('tools/call', { name: 'answer-and-exit', arguments: { bytes: 2_000_000 } }, { timeoutMs: 5000, maxTimeoutMs: 5000 });
    assert.equal((r.content as Array<{ text: string }>)[0]!.text.length, 2_000_000);
  });
});

describe('legacy SSE and idleness', () => {
  it('a connected legacy SSE session is not reaped as idle', async () => {
    const gw = await startGateway({
      session: { idleTimeoutMs: 1000 },
      upstreams: [everythingUpstream('everything', 'shared')],
      endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
    });
    try {
      const client = await connectClient(gw, 'sse');
      // A session opened after it, with no stream, is reaped as idle: then the sweep has judged both.
      const init = await fetch(gw.url(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'idle', version: '1' } } }),
      });
      const idle = init.headers.get('mcp-session-id')!;
      await init.text();
      // 1.8 s of idleness: the clock moves instead of the test sleeping.
      await withClockAhead(1800, () => waitFor(() => !gw.app.gateway.registry.get(idle), { timeoutMs: 5000 }));
      assert.equal(gw.app.gateway.registry.get(idle), undefined, 'the idle session without a stream was reaped');
      assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { message: 'still here' } })), 'Echo: still here');
      await client.close();
    } finally {
      await gw.close();
    }
  });
});
