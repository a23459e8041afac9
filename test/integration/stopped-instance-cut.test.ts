// A listing (an idempotent request, retried once when its upstream crashes) cut because its instance was
// stopped on purpose: the gateway stopping, or a reload's retired pool stopped at the end of its drain grace.
// It must fail at once with SWB_SHUTTING_DOWN, not wait initTimeoutMs (60 s here) for a restart that a
// stopped instance never makes, its timer holding the process and its client waiting all that time.
// The stop resolving with the listing already settled shows it, with no clock read.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GatewayError } from '../../src/errors.js';
import { fileGateway } from '../helpers/file-gateway.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'swb-stopped-cut-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function doc(hold: string, set: string, name = 'cat'): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    admin: { drainGraceMs: 0 },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [{ name, transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', set, '--hold-lists', hold], sandbox: 'none', sharing: 'shared', pool: { size: 1 }, initTimeoutMs: 60_000 }],
    endpoints: [{ path: '/mcp', upstreams: [name] }],
  };
}

/** What a promise has come to so far: 'pending', 'answered', or its error. */
function watch(p: Promise<unknown>): () => unknown {
  let outcome: unknown = 'pending';
  p.then(() => (outcome = 'answered'), (err: unknown) => (outcome = err));
  return () => outcome;
}

const shuttingDown = (o: unknown) => o instanceof GatewayError && o.code === 'SWB_SHUTTING_DOWN' && /"cat"/.test(o.message);

describe('a listing cut by a deliberate stop (found by a review)', () => {
  it('the gateway stopping: the listing fails SWB_SHUTTING_DOWN before the stop resolves', async () => {
    const hold = join(dir, 'hold-stop');
    const { app, close } = await fileGateway('swb-stopped-cut-', doc(hold, 'chat'));
    const inst = [...app.gateway.pools.get('cat')!.instances][0]!;
    writeFileSync(hold, ''); // from here the upstream answers no listing
    const listing = watch(inst.request('tools/list', {}, {}));
    await until('the listing reaches the upstream', () => inst.inflight === 1);
    await close();
    await new Promise((r) => setImmediate(r));
    assert.ok(shuttingDown(listing()), `the listing after the gateway stopped: ${String(listing())}`);
  });

  it("a reload's retired pool stopped at its grace: the client's listing fails SWB_SHUTTING_DOWN once the drain is done", async () => {
    const hold = join(dir, 'hold-retire');
    const { app, gw, write, close } = await fileGateway('swb-stopped-cut-', doc(hold, 'chat'));
    const client = await connectClient(gw, 'streamable-http');
    const old = app.gateway.pools.get('cat')!;
    const inst = [...old.instances][0]!;
    writeFileSync(hold, '');
    inst.catalogues.forget('tools'); // listed afresh for the client (at start it was listed before the hold)
    const fromClient = client.listTools();
    fromClient.catch(() => {});
    await until("the client's listing reaches the upstream", () => inst.inflight === 1);
    const listing = watch(inst.catalogues.get('tools')); // the listing the client's request waits for
    write(doc(hold, 'files')); // the upstream changes: its pool is replaced, the old one retired with no grace
    const { report, drained } = await app.reload('test');
    assert.equal(report.result, 'applied');
    await drained;
    await new Promise((r) => setImmediate(r));
    assert.ok(shuttingDown(listing()), `the listing after its pool was retired: ${String(listing())}`);
    await assert.rejects(fromClient, /SWB_SHUTTING_DOWN|is stopping/);
    await client.close().catch(() => {});
    await close();
  });

  it('a reload that removed the upstream: the cut listing says it was removed, not replaced', async () => {
    const hold = join(dir, 'hold-remove');
    const { app, write, close } = await fileGateway('swb-stopped-cut-', doc(hold, 'chat'));
    const inst = [...app.gateway.pools.get('cat')!.instances][0]!;
    writeFileSync(hold, '');
    const listing = watch(inst.request('tools/list', {}, {}));
    await until('the listing reaches the upstream', () => inst.inflight === 1);
    write(doc(join(dir, 'no-hold'), 'chat', 'other')); // `cat` is gone from the config: its pool retired with no grace
    const { report, drained } = await app.reload('test');
    assert.equal(report.result, 'applied');
    await drained;
    await new Promise((r) => setImmediate(r));
    assert.ok(shuttingDown(listing()), `the listing after its pool was retired: ${String(listing())}`);
    assert.match((listing() as Error).message, /removed/);
    await close();
  });
});
