import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import { StdioTransport } from '../../../src/upstream/stdio-transport.js';

// A server that takes its time to exit once told to: it ignores its stdin closing, and on SIGTERM exits
// only after a moment (it says it is ready once it listens for SIGTERM).
const SLOW_EXIT = `
process.on('SIGTERM', () => setTimeout(() => process.exit(0), 300));
setInterval(() => {}, 1000);
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'ready' }) + '\\n');
`;

describe('StdioTransport.close called twice (found by a review)', () => {
  it('the second call resolves once the process has exited, as the first does, not at once', async () => {
    const t = new StdioTransport({ command: process.execPath, args: ['-e', SLOW_EXIT], env: {}, maxLineBytes: 1 << 20, stopGraceMs: 300, logger: createLogger('silent') });
    let exited = false;
    t.onclose = () => void (exited = true);
    const ready = new Promise<void>((resolve) => (t.onmessage = () => resolve()));
    await t.start();
    await ready;
    const pid = t.pid!;
    const first = t.close(); // a restart closing it
    const second = t.close(); // shutdown, meanwhile
    await second;
    assert.equal(exited, true, 'the second close() returned while the process still ran');
    assert.throws(() => process.kill(pid, 0), /ESRCH/, 'the process is still there');
    await first;
    await t.close(); // once gone: at once
  });
});
