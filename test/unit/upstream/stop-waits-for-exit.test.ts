// A stop already under way (an idle user's instances swept, a session's instance released) is waited for
// by the stop that follows it (the pool's close, at the gateway's stop): it does not resolve while the
// process still runs. The server lingers once its stdin closes, until its SIGTERM (stopGraceMs later), so
// a close that returned at once finds it alive.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { StdioTransport } from '../../../src/upstream/stdio-transport.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import type { UpstreamCaller } from '../../../src/upstream/upstream-caller.js';
import { alive } from '../../helpers/processes.js';
import { until } from '../../helpers/wait.js';

const CATALOGUE = join(import.meta.dirname, '..', '..', 'fixtures', 'catalogue-server.mjs');
const logger = createLogger('silent');

function lingeringPool(sharing: 'shared' | 'per-user' | 'per-session', pool: Record<string, unknown> = {}): UpstreamPool {
  const cfg = parseConfig(
    {
      upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, args: [CATALOGUE, '--linger'], sandbox: 'none', sharing, healthCheck: { intervalMs: 0 }, pool: { size: 1, warm: 0, ...pool } }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    },
    'test',
    {},
  );
  return new UpstreamPool(cfg.upstreams[0]!, logger, () => new StdioTransport({ command: process.execPath, args: [CATALOGUE, '--linger'], env: {}, maxLineBytes: 1 << 20, stopGraceMs: 1000, logger }));
}

const caller: UpstreamCaller = { id: 's1', tenant: 't', principal: { issuer: 'https://issuer.test', subject: 'alice', tenant: 't' }, clientRequest: async () => ({}), clientNotify: () => {} };

/** The pid of the pool's one instance, once it is ready. */
async function runningPid(pool: UpstreamPool): Promise<number> {
  await until('the instance is ready', () => [...pool.instances].some((i) => i.pid !== undefined));
  return [...pool.instances][0]!.pid!;
}

describe('a stop under way is waited for by the next one (found by a review)', () => {
  it("an instance's second stop resolves once the process has exited, as the first does", async () => {
    const pool = lingeringPool('shared');
    await pool.start();
    const inst = [...pool.instances][0]!;
    const pid = await runningPid(pool);
    const first = inst.stop(); // a retiring pool's drain
    await inst.stop(); // the gateway's stop, meanwhile
    assert.equal(alive(pid), false, 'the second stop() returned while the process still ran');
    await first;
  });

  it("per-user: the pool's close waits for the instances an idle sweep is stopping", async () => {
    const pool = lingeringPool('per-user', { userIdleMs: 1000 });
    await pool.lease(caller);
    pool.instanceFor(caller);
    const pid = await runningPid(pool);
    // The sweep has taken the idle user out (its instances are stopping, the process lingers).
    await until('the idle sweep begins', () => pool.instances.size === 0);
    await pool.close();
    assert.equal(alive(pid), false, "the pool's close returned while a swept user's process still ran");
  });

  it("per-session: the pool's close waits for an instance being released", async () => {
    const pool = lingeringPool('per-session', { max: 2 });
    const inst = (await pool.lease(caller))!;
    const pid = await runningPid(pool);
    const released = pool.release(inst); // endpoint-router's release of a stale lease after a reload: not awaited
    await pool.close();
    assert.equal(alive(pid), false, "the pool's close returned while a released instance's process still ran");
    await released;
  });
});
