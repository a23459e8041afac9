import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createLogger } from '../../src/observability/logger.js';
import { StdioTransport } from '../../src/upstream/stdio-transport.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/types.js';
import { alive } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A server that starts a helper in a session of its own (Node's detached spawn, Python's
 * start_new_session) with its stdio inherited: the helper holds the gateway's pipes open after the
 * server itself is gone, and is out of reach of the process-group kill (only bubblewrap's pid namespace
 * would take it down; the `limits` and `none` profiles have none).
 */
const helperPids: number[] = [];
after(() => {
  for (const pid of helperPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

function server(then: string): string {
  return [
    "const h = require('child_process').spawn('sleep', ['30'], { detached: true, stdio: 'inherit' });",
    'h.unref();',
    "process.stderr.write('helper ' + h.pid + '\\n');",
    then,
  ].join('\n');
}

function transport(script: string) {
  const entries: Array<{ msg: string; stream?: string; code?: number | null }> = [];
  const capture = createLogger('info', { write: (line: string) => void entries.push(JSON.parse(line)) });
  let exits = 0;
  const t = new StdioTransport({ command: process.execPath, args: ['-e', script], env: { PATH: process.env.PATH! }, maxLineBytes: 1 << 20, logger: capture, stopGraceMs: 300, onExit: () => exits++ });
  const messages: JsonRpcMessage[] = [];
  t.onmessage = (m) => messages.push(m);
  const closed = new Promise<number>((resolve) => (t.onclose = () => resolve(performance.now())));
  const helper = () => {
    const line = entries.find((e) => e.stream === 'stderr' && /helper \d+/.test(e.msg));
    const pid = line ? Number(/helper (\d+)/.exec(line.msg)![1]) : undefined;
    if (pid) helperPids.push(pid);
    return pid;
  };
  return { t, entries, messages, closed, exits: () => exits, helper };
}

describe('a stdio server that leaves a helper holding its pipes (a new session, stdio inherited)', () => {
  it('is seen gone within a second of its exit: what it wrote is read, its stderr and exit code logged', async () => {
    const notice = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'bye' } });
    const { t, entries, messages, closed, exits, helper } = transport(server(`setTimeout(() => { process.stdout.write(${JSON.stringify(notice + '\n')}); process.exitCode = 3; }, 100);`));
    await t.start();
    const leader = t.pid!;
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000).unref());
    // The leader exits ~100 ms after it starts; 'close' alone would wait for the helper's 30 s.
    const at = await Promise.race([closed, timeout]);
    const pid = helper();
    assert.notEqual(at, 'timeout', 'onclose was never called while the helper held the pipes');
    assert.equal(alive(leader), false);
    assert.equal(exits(), 1, 'onExit once (what gives the sandbox uid back)');
    assert.ok(pid && alive(pid), 'the helper was running in its own session (the case under test)');
    assert.deepEqual(messages.map((m) => (m as { method?: string }).method), ['notifications/message'], 'the message written before exiting is read');
    const exited = entries.find((e) => e.msg === 'upstream process exited');
    assert.equal(exited?.code, 3, `the exit code is logged: ${JSON.stringify(entries)}`);
    await t.close(); // already closed: returns at once
  });

  it('close() returns within twice stopGraceMs when the server ignores stdin closing', async () => {
    const { t, closed, exits, helper } = transport(server('setInterval(() => {}, 1000);'));
    await t.start();
    assert.ok(await waitFor(() => helper() !== undefined, { timeoutMs: 10_000 }), 'the helper started');
    const done = t.close().then(() => 'closed' as const);
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 5000).unref());
    const at = await Promise.race([done, timeout]);
    assert.notEqual(at, 'timeout', 'close() still waiting after 5 s (it waited for the helper, which holds the pipes for 30 s)');
    await closed;
    assert.equal(exits(), 1);
  });
});
