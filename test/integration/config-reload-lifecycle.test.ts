// What a reload starts and stops over several reloads: an upstream an endpoint stops using and then uses
// again, with real stdio upstreams (label-server.mjs tells processes apart) and the app built from a file.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileGateway } from '../helpers/file-gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

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
