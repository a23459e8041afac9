// A root gateway gives each sandboxed instance a pooled uid, and takes it back when the server exits, once
// whatever still runs as it is killed (a helper the server left in a session of its own). That kill used to
// run a helper child synchronously (spawnSync) on the event loop: every client's request waited for it, at
// each exit of each upstream. Now it runs beside the event loop, and the uid goes back only once the helper
// has exited. Real processes; changing a child's uid needs root (the gateway pools uids only then).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, describe, it, mock } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UidPool } from '../../../src/sandbox/uid-pool.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { alive } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

const root = process.getuid?.() === 0;
after(() => mock.restoreAll());

/** Whether a live process (a zombie is not) runs as `uid`: read at once, where the reaper's own walk is awaited. */
function uidRunning(uid: number): boolean {
  return readdirSync('/proc').some((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      return new RegExp(`^Uid:\\s+(${uid}\\s|\\d+\\s+${uid}\\s)`, 'm').test(status) && !/^State:\s+Z/m.test(status);
    } catch {
      return false; // not a process, or gone meanwhile
    }
  });
}

/** A server that leaves a helper in a session of its own (out of reach of its group's kill), and says its pid. */
const SERVER = [
  "const h = require('child_process').spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });",
  'h.unref();',
  "process.stderr.write('helper ' + h.pid + '\\n');",
  'setInterval(() => {}, 1000);',
].join('\n');

describe('a pooled sandbox uid, when its server exits', () => {
  it('goes back to the pool only after its leftover processes are killed, in a later turn of the event loop than the exit', { skip: !root && 'needs root' }, async () => {
    const entries: Array<{ msg: string; stream?: string }> = [];
    const logger = createLogger('info', { write: (line: string) => void entries.push(JSON.parse(line)) });
    const upstream = parseConfig(
      { upstreams: [{ name: 'leaver', transport: 'stdio', command: process.execPath, args: ['-e', SERVER], sandbox: { type: 'limits' } }], endpoints: [{ path: '/mcp', upstreams: ['leaver'] }] },
      'test',
      {},
      process.cwd(),
    ).upstreams[0]!;
    const acquire = mock.method(UidPool.prototype, 'acquire');
    const released: Array<{ uid: number; uidRunning: boolean; afterClose: boolean }> = [];
    let closed = false;
    let helper: number | undefined;
    const release = UidPool.prototype.release;
    mock.method(UidPool.prototype, 'release', function (this: UidPool, uid: number) {
      // runningUids, not alive(): the helper killed, its zombie may wait a while for init to reap it.
      released.push({ uid, uidRunning: uidRunning(uid), afterClose: closed });
      return release.call(this, uid);
    });
    const transport = new UpstreamTransports().create(upstream, logger);
    let releasedAtClose: number | undefined;
    transport.onclose = () => {
      closed = true;
      releasedAtClose = released.length;
    };
    try {
      await transport.start();
      const uid = await acquire.mock.calls[0]!.result!;
      const line = await waitFor(() => entries.find((e) => e.stream === 'stderr' && /helper \d+/.test(e.msg)), { timeoutMs: 10_000 });
      assert.ok(line, `the server started its helper: ${JSON.stringify(entries)}`);
      helper = Number(/helper (\d+)/.exec(line.msg)![1]);
      assert.ok(alive(helper), 'the helper runs in a session of its own (the case under test)');
      await transport.close();
      assert.equal(releasedAtClose, 0, 'the uid went back within the exit\'s own turn of the event loop: the kill of its processes blocked it');
      assert.ok(await waitFor(() => released.length > 0, { timeoutMs: 10_000 }), 'the uid never went back to the pool');
      assert.deepEqual(released, [{ uid, uidRunning: false, afterClose: true }], 'given back while a process of it still ran');
    } finally {
      if (helper !== undefined && alive(helper)) process.kill(helper, 'SIGKILL');
    }
  });
});
