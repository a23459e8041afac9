// A request its client cancels keeps its tenant's concurrentRequests slot for limits.cancelledHoldMs (found by a
// review on 2026-12-07). MCP's notifications/cancelled is advisory: a server may go on running the call and
// says nothing when (or whether) it stops. The slot was given back at once, so a client limited to one request
// in flight could start a long call and cancel it, again and again, and have as many running on its upstream as
// it liked (with no requestsPerSecond, without bound); dropping a 2026-07-28 call's connection did the same.
// A real gateway on a real port, the label stdio fixture (its `sleep` ignores cancellation), the official
// SDK client (2025) and raw 2026-07-28 POSTs; the hold is set long, so nothing here depends on timing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { connectClient, mcpRefusal } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const LABEL = { transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/label-server.mjs', '--label', 'v1'], sandbox: 'none' as const, sharing: 'shared' as const };
const SLEEP = { name: 'sleep', arguments: { ms: 600_000 } };
const QUICK = { name: 'label', arguments: {} };

/** How many tools/call requests of `era` the gateway counted as cancelled. */
async function cancelled(gw: RunningGateway, era: 'legacy' | 'modern'): Promise<number> {
  const text = await (await fetch(gw.app.metricsUrl!)).text();
  let n = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('switchboard_requests_total{') && line.includes('method="tools/call"') && line.includes('outcome="cancelled"') && line.includes(`protocol_era="${era}"`)) n += Number(line.split(' ').pop());
  }
  return n;
}

describe('concurrentRequests after a cancelled request', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let client: Client;

  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'l', ...LABEL }],
      endpoints: [{ path: '/mcp', upstreams: ['l'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { concurrentRequests: 1, cancelledHoldMs: 600_000 } }],
    });
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  it('2025: a call cancelled with notifications/cancelled holds its slot on', async () => {
    const ac = new AbortController();
    const call = client.callTool(SLEEP, undefined, { signal: ac.signal, timeout: 600_000 });
    call.catch(() => {});
    await until('the long call holds the slot', () => client.callTool(QUICK).then(() => false, (err) => err?.data?.code === 'SWB_RATE_LIMITED'));
    const before = await cancelled(gw, 'legacy');
    ac.abort();
    await until('the gateway ended the cancelled call', async () => (await cancelled(gw, 'legacy')) > before);
    // Its upstream is still running it: the tenant's one slot is still taken.
    const refused = await mcpRefusal(() => client.callTool(QUICK));
    assert.equal((refused.data as { code?: string } | undefined)?.code, 'SWB_RATE_LIMITED', refused.message);
  });
});

describe('concurrentRequests after a 2026-07-28 call whose connection dropped', { timeout: 60_000 }, () => {
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'l', ...LABEL }],
      endpoints: [{ path: '/mcp', upstreams: ['l'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { concurrentRequests: 1, cancelledHoldMs: 600_000 } }],
    });
  });
  after(() => gw?.close());

  it('the dropped call holds its slot on', async () => {
    const ac = new AbortController();
    const call = modernPost(gw.url(), 'tools/call', SLEEP, { signal: ac.signal });
    call.catch(() => {});
    await until('the long call holds the slot', async () => (await modernPost(gw.url(), 'tools/call', QUICK)).body.error?.data?.code === 'SWB_RATE_LIMITED');
    const before = await cancelled(gw, 'modern');
    ac.abort();
    await until('the gateway ended the dropped call', async () => (await cancelled(gw, 'modern')) > before);
    const refused = await modernPost(gw.url(), 'tools/call', QUICK);
    assert.equal(refused.body.error?.data?.code, 'SWB_RATE_LIMITED', JSON.stringify(refused.body));
  });
});

describe('concurrentRequests once a cancelled request\'s hold is over', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let client: Client;

  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'l', ...LABEL }],
      endpoints: [{ path: '/mcp', upstreams: ['l'] }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { concurrentRequests: 1, cancelledHoldMs: 50 } }],
    });
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  it('the slot comes back: the next call is served', async () => {
    const ac = new AbortController();
    const call = client.callTool(SLEEP, undefined, { signal: ac.signal, timeout: 600_000 });
    call.catch(() => {});
    await until('the long call holds the slot', () => client.callTool(QUICK).then(() => false, (err) => err?.data?.code === 'SWB_RATE_LIMITED'));
    ac.abort();
    await until('the held slot came back', () => client.callTool(QUICK).then(() => true, () => false));
  });
});
