// A call its client cancels keeps its upstream instance's concurrency slot until the upstream answers it or the
// upstream's concurrency.cancelledHoldMs is over (found by a review on 2026-12-07). MCP's notifications/cancelled
// is advisory: a server may go on running the call, and one that does not says nothing. The slot was given back
// at once, so call and cancel, again and again, had as many calls running on an instance as the client liked,
// whatever concurrency.max said (the tenant's concurrentRequests, when set, held its own slot; when not, nothing did).
// A real gateway on a real port, the peak stdio fixture (its sleep ignores cancellation, answers at SIGUSR2 and
// writes how many calls it runs to a file), the official SDK client; nothing here depends on timing.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const SLEEP = { name: 'sleep', arguments: { ms: 600_000 } };
const QUICK = { name: 'sleep', arguments: { ms: 0 } };
type PeakState = { pid: number; received: number; running: number; peak: number };

function peakUpstream(stateFile: string, queue: number, cancelledHoldMs: number) {
  return {
    name: 'p', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/peak-server.mjs'], env: { STATE_FILE: stateFile },
    sandbox: 'none' as const, sharing: 'shared' as const, concurrency: { max: 1, queue, queueTimeoutMs: 600_000, cancelledHoldMs },
  };
}

/** How many tools/call requests the gateway counted as cancelled. */
async function cancelled(gw: RunningGateway): Promise<number> {
  const text = await (await fetch(gw.app.metricsUrl!)).text();
  let n = 0;
  for (const line of text.split('\n')) if (line.startsWith('switchboard_requests_total{') && line.includes('method="tools/call"') && line.includes('outcome="cancelled"')) n += Number(line.split(' ').pop());
  return n;
}

/** A gateway on the peak fixture (concurrency.max 1, `queue`, `cancelledHoldMs`) and an SDK client, for the suite. */
function peakRig(queue: number, cancelledHoldMs: number): { readonly gw: RunningGateway; readonly client: Client; read(): PeakState } {
  let dir: string;
  let stateFile: string;
  const rig = {} as { gw: RunningGateway; client: Client; read(): PeakState };
  rig.read = () => JSON.parse(readFileSync(stateFile, 'utf8')) as PeakState;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-peak-'));
    stateFile = join(dir, 'state.json');
    rig.gw = await startGateway({ pinning: { mode: 'off' }, upstreams: [peakUpstream(stateFile, queue, cancelledHoldMs)], endpoints: [{ path: '/mcp', upstreams: ['p'] }] });
    rig.client = await connectClient(rig.gw, 'streamable-http');
  });
  after(async () => {
    await rig.client?.close();
    await rig.gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return rig;
}

describe('an instance\'s concurrency slot after a cancelled call', { timeout: 60_000 }, () => {
  const rig = peakRig(0, 600_000);

  it('is held until the upstream answers the cancelled call: the upstream never runs more than concurrency.max', async () => {
    const ac = new AbortController();
    rig.client.callTool(SLEEP, undefined, { signal: ac.signal, timeout: 600_000 }).catch(() => {});
    await until('the first call reached the upstream', () => rig.read().running === 1);
    const before = await cancelled(rig.gw);
    ac.abort();
    await until('the gateway ended the cancelled call', async () => (await cancelled(rig.gw)) > before);
    // The next call: sent at once (the bug: two running on an instance of one slot), or refused (no queue).
    let refusal: string | undefined;
    const next = rig.client.callTool(SLEEP, undefined, { timeout: 600_000 }).then(
      () => 'answered',
      (err: { data?: { code?: string } }) => (refusal = err?.data?.code ?? String(err)),
    );
    await until('the next call was refused or reached the upstream', () => refusal !== undefined || rig.read().received === 2);
    assert.equal(rig.read().peak, 1, 'the upstream ran the cancelled call and the next one at once');
    assert.equal(refusal, 'SWB_UPSTREAM_BUSY');
    // The upstream answers the cancelled call late: its slot is free, the next call is served.
    process.kill(rig.read().pid, 'SIGUSR2');
    await until('a call is served again', () => rig.client.callTool(QUICK).then(() => true, () => false));
    assert.equal(rig.read().peak, 1);
    await next;
  });
});

describe('an instance\'s concurrency slot once a cancelled call\'s hold is over', { timeout: 60_000 }, () => {
  const rig = peakRig(8, 50);

  it('comes back without an answer: the next call is sent', async () => {
    const ac = new AbortController();
    rig.client.callTool(SLEEP, undefined, { signal: ac.signal, timeout: 600_000 }).catch(() => {});
    await until('the first call reached the upstream', () => rig.read().running === 1);
    ac.abort();
    const next = rig.client.callTool(SLEEP, undefined, { timeout: 600_000 });
    await until('the next call reached the upstream', () => rig.read().received === 2);
    process.kill(rig.read().pid, 'SIGUSR2');
    await next;
  });
});
