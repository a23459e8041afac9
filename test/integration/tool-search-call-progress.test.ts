// call_tool is the direct call it wraps: the progress its upstream reports reaches the caller, and a
// cancellation of the call_tool request cancels the upstream's call, in the 2025 session era.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';
import { waitFor } from '../helpers/wait.js';

describe('call_tool on a search-mode endpoint: progress and cancellation', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [everythingUpstream('everything', 'shared', { pool: { size: 1, warm: 1, max: 4 } })],
      endpoints: [{ path: '/mcp', upstreams: ['everything'], tools: { exposure: 'search' } }],
    });
  });
  after(() => gw?.close());

  it('relays the upstream progress of the wrapped call', async () => {
    const c = await connectClient(gw, 'streamable-http');
    const seen: number[] = [];
    await c.callTool({ name: 'call_tool', arguments: { name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } } }, undefined, { onprogress: (p) => void seen.push(p.progress) });
    assert.ok(seen.length >= 1, 'progress reached the caller');
    await c.close();
  });

  it('a cancelled call_tool cancels the upstream call it wraps', async () => {
    const c = await connectClient(gw, 'streamable-http');
    const abort = new AbortController();
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    const call = c.callTool({ name: 'call_tool', arguments: { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 30 } } }, undefined, { signal: abort.signal, onprogress: () => inFlight() });
    await started;
    const pool = gw.app.gateway.pools.get('everything')!;
    assert.ok([...pool.instances].some((i) => i.inflight > 0));
    abort.abort();
    await assert.rejects(call);
    assert.ok(await waitFor(() => [...pool.instances].every((i) => i.inflight === 0) || undefined), 'the upstream call ended');
    await c.close();
  });
});
