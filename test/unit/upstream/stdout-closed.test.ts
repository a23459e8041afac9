// A server that closes its stdout and runs on can answer nothing: every call to it waited out its
// requestTimeoutMs (60 s), and the instance stayed "ready" until three health checks had failed (some
// 90 s), each call in between failing the same way. A real child process.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import type { TransportError } from '../../../src/transport/transport.js';
import { StdioTransport } from '../../../src/upstream/stdio-transport.js';
import { until } from '../../helpers/wait.js';

/** Says it is there, closes its stdout, and runs on (neither stdin's end nor anything else stops it). */
const SERVER = `
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'ready' }) + '\\n', () => require('fs').closeSync(1));
setInterval(() => {}, 1000);
`;

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a stdio server that closes its stdout and runs on', () => {
  it('is stopped, and its link closes saying why (its instance restarts it)', async () => {
    const t = new StdioTransport({ command: process.execPath, args: ['-e', SERVER], env: {}, maxLineBytes: 1 << 20, stopGraceMs: 2000, logger: createLogger('silent') });
    let closed: { reason: TransportError | undefined } | undefined;
    t.onclose = (reason) => void (closed = { reason });
    const ready = new Promise<void>((resolve) => (t.onmessage = () => resolve()));
    await t.start();
    const pid = t.pid!;
    try {
      await ready;
      await until('the link to close', () => closed !== undefined);
      assert.equal(closed!.reason?.code, 'output-closed');
      assert.match(closed!.reason!.message, /closed its stdout but kept running; it was stopped and will be restarted/);
      assert.equal(running(pid), false, 'the process still runs');
    } finally {
      await t.close();
      if (running(pid)) process.kill(-pid, 'SIGKILL');
    }
  });
});

/** Says it is there, closes its stdin, and runs on: what the gateway sends it from then on is lost. */
const DEAF_SERVER = `
require('fs').closeSync(0);
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'ready' }) + '\\n');
setInterval(() => {}, 1000);
`;

describe('a stdio server that closes its stdin and runs on (found by a review)', () => {
  it('is stopped at the first message it cannot be sent, and its link closes saying why', async () => {
    const t = new StdioTransport({ command: process.execPath, args: ['-e', DEAF_SERVER], env: {}, maxLineBytes: 1 << 20, stopGraceMs: 2000, logger: createLogger('silent') });
    let closed: { reason: TransportError | undefined } | undefined;
    t.onclose = (reason) => void (closed = { reason });
    const ready = new Promise<void>((resolve) => (t.onmessage = () => resolve()));
    await t.start();
    const pid = t.pid!;
    try {
      await ready;
      // A call: its write fails (EPIPE), and the call waited out requestTimeoutMs, then the health checks.
      const sent = t.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }).then(() => 'sent', () => 'refused');
      await until('the link to close', () => closed !== undefined);
      assert.equal(closed!.reason?.code, 'input-closed');
      assert.match(closed!.reason!.message, /closed its stdin but kept running; it was stopped and will be restarted/);
      assert.equal(running(pid), false, 'the process still runs');
      assert.ok(['sent', 'refused'].includes(await sent), 'the send settles');
    } finally {
      await t.close();
      if (running(pid)) process.kill(-pid, 'SIGKILL');
    }
  });
});
