// A shared instance that hangs (here: stopped with SIGSTOP, as a process wedged in a syscall or a deadlock
// looks to the gateway) fails its health checks. Stopping it takes the stop's whole escalation (stdin
// closed, SIGTERM, SIGKILL, a grace period each): meanwhile it stayed "ready", so calls went to it and failed
// ("process is not running") while another instance was live, and each further tick logged the failure again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { alive } from '../helpers/processes.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const LABEL = { command: process.execPath, args: ['test/fixtures/label-server.mjs', '--label', 'v1'], sandbox: 'none' as const };

describe('shared pool: an instance that fails its health checks', () => {
  it('is down at once (calls go to the live instance) and its process is gone once the gateway stops', async () => {
    const lines: string[] = [];
    const gw = await startGateway(
      {
        upstreams: [{ name: 'sh', transport: 'stdio', ...LABEL, sharing: 'shared', pool: { size: 2 }, restart: { initialDelayMs: 60_000, maxDelayMs: 60_000 }, healthCheck: { intervalMs: 200, timeoutMs: 100, failures: 2 } }],
        endpoints: [{ path: '/mcp', upstreams: ['sh'] }],
      },
      { logLines: lines },
    );
    let hung: number | undefined;
    const client = await connectClient(gw, 'streamable-http');
    try {
      const pool = gw.app.gateway.pools.get('sh')!;
      const [bad, good] = [...pool.instances];
      await until('both instances to be ready', () => bad!.state === 'ready' && good!.state === 'ready', 10_000);
      hung = bad!.pid!;
      process.kill(hung, 'SIGSTOP');
      await until('the hung instance to fail its health checks', () => lines.some((l) => l.includes('failed its health checks')), 10_000);
      assert.notEqual(bad!.state, 'ready', 'failed its health checks: no longer offered calls');
      const answers: string[] = [];
      for (let i = 0; i < 4; i++) answers.push(await client.callTool({ name: 'label', arguments: {} }).then((r) => textOf(r), (e: Error) => e.message));
      assert.deepEqual(answers, Array(4).fill(`v1 ${good!.pid}`), 'every call answered by the live instance');
      process.kill(hung, 'SIGCONT'); // lets it read the end of its stdin and exit, so the stop below is quick
    } finally {
      await client.close().catch(() => {});
      await gw.close();
    }
    assert.equal(alive(hung!), false, 'the gateway stop waited for the hung process to be gone');
  });
});
