// What a reload starts and stops over several reloads: an upstream an endpoint stops using and then uses
// again, with real stdio upstreams (label-server.mjs tells processes apart) and the app built from a file.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileGateway } from '../helpers/file-gateway.js';
import { startRedis } from '../helpers/redis.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');
const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');

type Doc = Record<string, any>;

function upstream(name: string, label: string, extra: Record<string, unknown> = {}) {
  return { name, transport: 'stdio', command: process.execPath, args: [LABEL, '--label', label], sandbox: 'none', ...extra };
}

function doc(endpoints: Doc[]): Doc {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    admin: { drainGraceMs: 2000 },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [upstream('steady', 'v1'), upstream('side', 's1', { sharing: 'shared', pool: { size: 1 } })],
    endpoints,
  };
}

describe('an upstream an endpoint stops using, then uses again', () => {
  it('runs its configured number of processes, not one more set per time it comes back', async () => {
    const withSide = doc([
      { path: '/mcp', upstreams: ['steady'] },
      { path: '/side', upstreams: ['side'] },
    ]);
    const { app, gw, write, close } = await fileGateway('swb-reload-wake-', withSide);
    try {
      const side = app.gateway.pools.get('side')!;
      await until('the upstream is up', () => [...side.instances].some((i) => i.state === 'ready'));
      assert.equal(side.instances.size, 1);
      write(doc([{ path: '/mcp', upstreams: ['steady'] }]));
      assert.equal((await app.reload('test')).report.result, 'applied');
      write(withSide);
      assert.equal((await app.reload('test')).report.result, 'applied');
      assert.equal(app.gateway.pools.get('side'), side, 'an unchanged upstream keeps its pool');
      const running = () => [...side.instances].filter((i) => i.state !== 'stopped').length;
      assert.equal(running(), 1, `pool.size is 1, yet ${running()} processes run`);
      const client = await connectClient(gw, 'streamable-http', { path: '/side' });
      try {
        assert.match(textOf(await client.callTool({ name: 'label', arguments: {} })), /^s1 \d+$/);
      } finally {
        await client.close();
      }
    } finally {
      await close();
    }
  });
});

describe('tool pinning turned on for an upstream by a reload', () => {
  it('when it was off for every upstream at start (no pin checks were built): reported as needing a restart, not applied in name only', async () => {
    const off = doc([{ path: '/mcp', upstreams: ['steady'] }]);
    const { app, write, close } = await fileGateway('swb-reload-pins-', off);
    try {
      assert.equal(app.gateway.pins, undefined, 'pinning is off for every upstream: nothing checks definitions');
      const on = structuredClone(off);
      on.upstreams[0].pinning = 'withhold';
      write(on);
      const { report } = await app.reload('test');
      assert.match(report.restartRequired.join('\n'), /upstreams\[0\]\.pinning/, `the answer says nothing of pinning: ${JSON.stringify(report)}`);
      const steady = app.gateway.config.upstreams.find((u) => u.name === 'steady')!;
      assert.notEqual(steady.pinning ?? app.gateway.config.pinning.mode, 'withhold', 'the config in force says withhold while nothing withholds');
      assert.equal(report.result, 'unchanged', 'nothing else changed: the upstream is not replaced for a setting left as it was');
    } finally {
      await close();
    }
  });
});

describe('a session opening while a reload changes its tenant', () => {
  it('is judged by the tenant as the reload left it, not as it was when its slot was asked for', async () => {
    const redis = await startRedis();
    const tenant = (deny: string[]) => ({ name: 'anonymous', endpoints: ['*'], tools: { deny }, limits: { sessions: 50 } });
    const base = { ...doc([{ path: '/mcp', upstreams: ['steady'] }]), store: { redis: { url: redis.url, keyPrefix: 'reload-open:' } }, tenants: [tenant([])] };
    const { app, gw, write, close } = await fileGateway('swb-reload-open-', base);
    let client: Awaited<ReturnType<typeof connectClient>> | undefined;
    try {
      await (await connectClient(gw, 'streamable-http')).close(); // everything warmed up, the slot script loaded
      redis.pause(); // the next session's slot is asked for and waits
      const opening = connectClient(gw, 'streamable-http');
      await new Promise((r) => setTimeout(r, 300));
      write({ ...base, tenants: [tenant(['label'])] });
      assert.equal((await app.reload('test')).report.result, 'applied');
      redis.resume();
      client = await opening;
      const denied = await client.callTool({ name: 'label', arguments: {} }).then(
        (r) => `allowed: ${textOf(r)}`,
        (err: Error) => err.message,
      );
      assert.doesNotMatch(denied, /^allowed/, 'a tool the tenant was denied by the reload is called by a session opened during it');
    } finally {
      redis.resume();
      await client?.close().catch(() => {});
      await close();
      await redis.stop();
    }
  });
});

describe('a reload asked while the gateway stops', () => {
  it('is refused, and starts nothing: pools started then were never stopped', async () => {
    const held = { name: 'held', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--set', 'hold'], sandbox: 'none', sharing: 'shared', pool: { size: 1 } };
    const base = { ...doc([{ path: '/mcp', upstreams: ['held'] }]), upstreams: [held] };
    const { app, gw, write, close } = await fileGateway('swb-reload-stop-', base);
    const client = await connectClient(gw, 'streamable-http');
    try {
      // A call in flight keeps the gateway in its drain while the reload is asked.
      const call = client.callTool({ name: 'hold', arguments: {} });
      await until('the call to reach the upstream', () => [...app.gateway.pools.get('held')!.instances].some((i) => i.inflight > 0));
      write({ ...base, upstreams: [held, upstream('late', 'l1', { sharing: 'shared', pool: { size: 1 } })], endpoints: [{ path: '/mcp', upstreams: ['held', 'late'] }] });
      const closing = app.close(10_000);
      const outcome = await app.reload('test');
      assert.equal(outcome.report.result, 'failed', JSON.stringify(outcome.report));
      assert.match(outcome.report.problems.join(' '), /shutting down/);
      assert.equal(app.gateway.pools.has('late'), false, 'no pool was started for the new upstream');
      const releaser = await connectClient(gw, 'streamable-http').catch(() => undefined);
      // New sessions are refused while the gateway drains: the held call is released from its own session.
      await (releaser ?? client).callTool({ name: 'release', arguments: {} }).catch(() => {});
      await call.catch(() => {});
      await closing;
      await releaser?.close().catch(() => {});
    } finally {
      await client.close().catch(() => {});
      await close();
    }
  });
});
