import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../src/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { StdioTransport } from '../../src/upstream/stdio-transport.js';
import { UpstreamClient } from '../../src/upstream/upstream-client.js';
import { alive } from '../helpers/processes.js';
import { holdMonotonicClock, waitFor, withClockAhead } from '../helpers/wait.js';

const logger = createLogger('silent');
const FIXTURE = 'test/fixtures/unruly-server.mjs';
const opts = { timeoutMs: 5000, maxTimeoutMs: 5000 };


async function start(args: string[] = [], maxLineBytes = 1 << 20) {
  const violations: string[] = [];
  const t = new StdioTransport({ command: process.execPath, args: [FIXTURE, ...args], env: { PATH: process.env.PATH! }, maxLineBytes, logger, stopGraceMs: 300, onProtocolViolation: (k) => violations.push(k) });
  const client = new UpstreamClient('unruly', t, logger, { resolveCaller: () => undefined, onNotification: () => {} });
  await t.start();
  await client.initialize(5000);
  return { t, client, violations };
}

describe('stdio upstream transport with a real child process', () => {
  it('counts and skips non-JSON and invalid lines without failing', async () => {
    const { t, client, violations } = await start(['--garbage-at-start']);
    const r = await client.request('tools/call', { name: 'garbage' }, opts);
    assert.deepEqual(r.content, [{ type: 'text', text: 'ok garbage' }]);
    assert.deepEqual(violations, ['non-json', 'invalid-message', 'non-json', 'invalid-message']);
    await t.close();
  });

  it('stops a child that writes a line over maxLineBytes; its call fails saying why', async () => {
    const { t, client, violations } = await start([], 64 * 1024);
    const pid = t.pid!;
    await assert.rejects(client.request('tools/call', { name: 'huge', arguments: { bytes: 200_000 } }, opts), (err: Error) => {
      assert.match(err.message, /more than 65536 bytes \(maxLineBytes\); it was stopped and will be restarted/);
      return true;
    });
    assert.deepEqual(violations, ['oversized-line']);
    await waitFor(() => !alive(pid), { timeoutMs: 1000 });
    assert.equal(alive(pid), false, 'the flooding process is gone');
    await t.close();
  });

  it('stops a child that floods its stdout with lines that are not JSON-RPC, past a burst it tolerates (found by a review)', async () => {
    // Each such line costs a thrown parse error: a server writing them as fast as its pipe took them held the
    // gateway's event loop, every session's, for seconds at a time, and ran on.
    const { t, client, violations } = await start();
    const r = await client.request('tools/call', { name: 'junk', arguments: { lines: 500 } }, opts);
    assert.deepEqual(r.content, [{ type: 'text', text: 'ok junk' }], 'a burst of noise (a banner, debug output) is tolerated');
    const pid = t.pid!;
    await assert.rejects(client.request('tools/call', { name: 'junk', arguments: { lines: 200_000, silent: true } }, opts), (err: Error) => {
      assert.match(err.message, /more than 1000 lines that are not JSON-RPC messages on its stdout .*; it was stopped and will be restarted/);
      return true;
    });
    assert.ok(violations.length < 2000, `what followed the cut was not looked at (${violations.length} of 200,500 lines)`);
    await waitFor(() => !alive(pid), { timeoutMs: 1000 });
    assert.equal(alive(pid), false, 'the flooding process is gone');
    await t.close();
  });

  it('reads a full pipe a chunk per event-loop turn: a server writing as fast as its pipe takes does not hold the gateway (found by a review)', async () => {
    // Valid notifications, 30 MiB as fast as the pipe takes them; then it exits. libuv read a readable pipe 32
    // times over before anything else ran: some 24,000 messages handled in one turn, a second and more of
    // every session's time with empty lines.
    const line = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(24) } })}\n`;
    const script = `const b = Buffer.from(${JSON.stringify(line)}.repeat(${Math.floor(65536 / line.length)})); let left = 480; const go = () => { while (left-- > 0) if (!process.stdout.write(b)) return void process.stdout.once('drain', go); process.stdout.end(); }; go();`;
    const t = new StdioTransport({ command: process.execPath, args: ['-e', script], env: {}, maxLineBytes: 1 << 20, logger, stopGraceMs: 300 });
    let total = 0;
    let sinceTurn = 0;
    let most = 0;
    t.onmessage = () => void (total++, sinceTurn++);
    const closed = new Promise<void>((resolve) => (t.onclose = () => resolve()));
    let done = false;
    const turn = (): void => {
      most = Math.max(most, sinceTurn);
      sinceTurn = 0;
      if (!done) setImmediate(turn);
    };
    turn();
    await t.start();
    await closed;
    done = true;
    assert.equal(total, 480 * Math.floor(65536 / line.length), 'every message was delivered');
    // Two reads at most between two of this test's ticks (its tick and the reader's resume take turns in the same
    // phase, and may fall either side of one another once); 32 before.
    const twoReads = 2 * Math.ceil(65536 / line.length);
    assert.ok(most <= twoReads, `at most two 64 KiB reads' messages between two turns (${twoReads}); ${most} were`);
  });

  it('stops the whole process group, escalating to SIGKILL for children that ignore SIGTERM', async () => {
    const { t, client } = await start(['--ignore-sigterm']);
    const r = await client.request('tools/call', { name: 'spawn' }, opts);
    const grandchild = Number((r.content as Array<{ text: string }>)[0]!.text);
    const leader = t.pid!;
    assert.ok(alive(grandchild) && alive(leader));
    await t.close();
    await waitFor(() => !alive(grandchild) && !alive(leader), { timeoutMs: 2000 });
    assert.equal(alive(leader), false, 'leader stopped');
    assert.equal(alive(grandchild), false, 'grandchild stopped with its group');
  });

  it('waits on pipe backpressure instead of buffering without bound, then delivers everything', async () => {
    const { t, client } = await start();
    await client.request('tools/call', { name: 'stall-stdin', arguments: { ms: 300 } }, opts);
    const big = 'y'.repeat(256 * 1024);
    // Several MB towards a child that is not reading: writes must wait for drain, then all get answered.
    const calls = Array.from({ length: 16 }, (_, i) => client.request('tools/call', { name: `n${i}`, arguments: { big } }, opts));
    const results = await Promise.all(calls);
    assert.deepEqual(results.map((r) => (r.content as Array<{ text: string }>)[0]!.text), Array.from({ length: 16 }, (_, i) => `ok n${i}`));
    await t.close();
  });

  it('a child that dies fails its requests in flight with SWB_UPSTREAM_CRASHED naming it', async () => {
    const { t, client } = await start();
    const pending = client.request('tools/call', { name: 'stall-stdin', arguments: { ms: 10_000 } }, opts);
    await pending; // answered, then the child stops reading
    const stuck = client.request('tools/call', { name: 'never' }, opts);
    await new Promise((r) => setImmediate(r)); // written (sends leave in one batch at the next loop turn): in flight
    process.kill(t.pid!, 'SIGKILL');
    await assert.rejects(stuck, (err: unknown) => err instanceof GatewayError && err.code === 'SWB_UPSTREAM_CRASHED' && /"unruly"/.test(err.message));
  });
});

describe("a stdio server's stderr in the gateway's log", () => {
  it('a crash stack trace is one log entry, not a line each', async () => {
    const entries: Array<{ msg: string; stream?: string; lines?: number }> = [];
    const capture = createLogger('info', { write: (line: string) => void entries.push(JSON.parse(line)) });
    // A real Node.js crash: the runtime prints the source line, the error with its frames and its version.
    const crash = 'function inner() { throw new TypeError("boom at startup") }\nfunction outer() { inner() }\nouter()';
    const t = new StdioTransport({ command: process.execPath, args: ['-e', crash], env: { PATH: process.env.PATH! }, maxLineBytes: 1 << 20, logger: capture });
    const closed = new Promise<void>((r) => (t.onclose = () => r()));
    await t.start();
    await closed;
    const stderr = entries.filter((e) => e.stream === 'stderr');
    const trace = stderr.find((e) => e.msg.includes('TypeError: boom at startup'));
    assert.ok(trace, `the error is logged: ${JSON.stringify(stderr)}`);
    const lines = trace.msg.split('\n');
    assert.ok(lines.some((l) => /^ {4}at inner /.test(l)) && lines.some((l) => /^ {4}at outer /.test(l)), `its frames are in the same entry: ${trace.msg}`);
    assert.equal(trace.lines, lines.length);
    // Every line the child wrote is logged exactly once, in fewer entries than lines.
    const all = stderr.flatMap((e) => e.msg.split('\n'));
    assert.ok(stderr.length < all.length, `grouped: ${stderr.length} entries for ${all.length} lines`);
    assert.equal(all.filter((l) => l.startsWith('TypeError: boom at startup')).length, 1);
  });
});

describe('an upstream instance stopped while it starts', () => {
  it('never starts a process that waited on its preflight or token (nothing would stop it later)', async () => {
    const { parseConfig } = await import('../../src/config/load.js');
    const { UpstreamInstance } = await import('../../src/upstream/upstream-instance.js');
    const cfg = parseConfig({ upstreams: [{ name: 'slow', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [FIXTURE] }], endpoints: [{ path: '/mcp', upstreams: ['slow'] }] });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let transport: StdioTransport | undefined;
    // A per-user token fetched at start, or the sandbox's first check: a start that waits before it spawns.
    const factory = () => (transport = new StdioTransport({ command: process.execPath, args: [FIXTURE], env: { PATH: process.env.PATH! }, maxLineBytes: 1 << 20, logger, stopGraceMs: 300, preflight: () => gate }));
    const inst = new UpstreamInstance(cfg.upstreams[0]!, logger, factory as never);
    const started = inst.start().catch(() => {});
    await waitFor(() => transport !== undefined);
    await inst.stop();
    open();
    await started;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(transport!.pid, undefined, 'a process was started after its instance was stopped');
  });
});

describe('a transport that closes itself', () => {
  it('is closed through its public close as well (what wraps it, a per-user link, lets go)', async () => {
    const { parseConfig } = await import('../../src/config/load.js');
    const { UpstreamInstance } = await import('../../src/upstream/upstream-instance.js');
    const cfg = parseConfig({ upstreams: [{ name: 'dies', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [FIXTURE], restart: { initialDelayMs: 60_000 } }], endpoints: [{ path: '/mcp', upstreams: ['dies'] }] });
    let transport: StdioTransport | undefined;
    let publicCloses = 0;
    const factory = () => {
      const t = new StdioTransport({ command: process.execPath, args: [FIXTURE], env: { PATH: process.env.PATH! }, maxLineBytes: 1 << 20, logger, stopGraceMs: 300 });
      const close = t.close.bind(t);
      t.close = async () => {
        publicCloses++;
        await close();
      };
      return (transport = t);
    };
    const inst = new UpstreamInstance(cfg.upstreams[0]!, logger, factory as never);
    try {
      await inst.start();
      process.kill(-transport!.pid!, 'SIGKILL'); // its process group: the child dies by itself, no close asked
      assert.ok(await waitFor(() => publicCloses > 0, { timeoutMs: 5000 }), 'the dead transport was never closed through its public close');
    } finally {
      await inst.stop();
    }
  });
});

describe('upstream instance restarts', () => {
  it('backs off exponentially across quick crashes and resets only after sustained uptime', async () => {
    const { parseConfig } = await import('../../src/config/load.js');
    const { UpstreamInstance } = await import('../../src/upstream/upstream-instance.js');
    const { UpstreamTransports } = await import('../../src/upstream/transport-factory.js');
    const stdioTransportFactory = new UpstreamTransports().create;
    const cfg = parseConfig({
      upstreams: [{ name: 'unruly', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [FIXTURE], restart: { initialDelayMs: 20, maxDelayMs: 200, resetAfterMs: 1500 } }],
      endpoints: [{ path: '/mcp', upstreams: ['unruly'] }],
    });
    const inst = new UpstreamInstance(cfg.upstreams[0]!, logger, stdioTransportFactory);
    const ready = () => new Promise<void>((r) => inst.once('ready', () => r()));
    await inst.start();
    try {
      for (let crash = 1; crash <= 3; crash++) {
        const back = ready();
        process.kill(inst.pid!, 'SIGKILL');
        await back;
        assert.equal(inst.backoffAttempt, crash, `attempt after crash ${crash}`);
      }
      // Sustained uptime: the (monotonic) clock moves past resetAfterMs instead of the test waiting it out.
      const clock = holdMonotonicClock();
      try {
        clock.advance(1600);
        const back = ready();
        process.kill(inst.pid!, 'SIGKILL');
        await back;
      } finally {
        clock.restore();
      }
      assert.equal(inst.backoffAttempt, 1, 'the backoff started over');
      assert.equal(inst.restarts, 4);
    } finally {
      await inst.stop();
    }
  });

  it('a wall clock stepped back (NTP, a resumed VM) does not keep the backoff from resetting after sustained uptime (found by a review)', async () => {
    const { parseConfig } = await import('../../src/config/load.js');
    const { UpstreamInstance } = await import('../../src/upstream/upstream-instance.js');
    const { UpstreamTransports } = await import('../../src/upstream/transport-factory.js');
    const cfg = parseConfig({
      upstreams: [{ name: 'unruly', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [FIXTURE], restart: { initialDelayMs: 20, maxDelayMs: 200, resetAfterMs: 1500 } }],
      endpoints: [{ path: '/mcp', upstreams: ['unruly'] }],
    });
    const inst = new UpstreamInstance(cfg.upstreams[0]!, logger, new UpstreamTransports().create);
    const ready = () => new Promise<void>((r) => inst.once('ready', () => r()));
    await inst.start();
    try {
      for (let crash = 1; crash <= 2; crash++) {
        const back = ready();
        process.kill(inst.pid!, 'SIGKILL');
        await back;
      }
      assert.equal(inst.backoffAttempt, 2);
      // Up for longer than resetAfterMs by the monotonic clock, while the wall clock went an hour back.
      const clock = holdMonotonicClock();
      try {
        clock.advance(1600);
        await withClockAhead(-3_600_000, async () => {
          const back = ready();
          process.kill(inst.pid!, 'SIGKILL');
          await back;
        });
      } finally {
        clock.restore();
      }
      assert.equal(inst.backoffAttempt, 1, 'the backoff did not start over: the crash was taken for one right after a start');
    } finally {
      await inst.stop();
    }
  });

  it('a retry that gives up waiting for the restart leaves no listener behind', async () => {
    const { parseConfig } = await import('../../src/config/load.js');
    const { UpstreamInstance } = await import('../../src/upstream/upstream-instance.js');
    const { UpstreamTransports } = await import('../../src/upstream/transport-factory.js');
    const cfg = parseConfig({
      upstreams: [{ name: 'unruly', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [FIXTURE], initTimeoutMs: 2000, restart: { initialDelayMs: 60_000, maxDelayMs: 60_000 } }],
      endpoints: [{ path: '/mcp', upstreams: ['unruly'] }],
    });
    const inst = new UpstreamInstance(cfg.upstreams[0]!, logger, new UpstreamTransports().create);
    await inst.start();
    const before = inst.listenerCount('ready');
    try {
      // The child stops reading, a ping (idempotent: retried once) is sent, the child dies: the retry
      // waits initTimeoutMs (long enough for a loaded machine to start the child at first) for a restart
      // that is a minute away, then fails as unavailable.
      process.kill(inst.pid!, 'SIGSTOP');
      const ping = inst.request('ping', undefined, {});
      await new Promise((r) => setTimeout(r, 50));
      process.kill(inst.pid!, 'SIGKILL');
      await assert.rejects(ping, (err: GatewayError) => err.code === 'SWB_UPSTREAM_UNAVAILABLE');
      assert.equal(inst.listenerCount('ready'), before, 'every retry given up during an outage leaves a ready listener');
    } finally {
      await inst.stop();
    }
  });
});
