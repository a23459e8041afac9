import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import { StdioTransport } from '../../../src/upstream/stdio-transport.js';

// A server that never reads its stdin: the pipe fills, and whatever the gateway sends on stays with it.
// It says it is ready once it runs; on SIGUSR2 it starts reading (and drops what it reads).
const NEVER_READS = `
process.on('SIGUSR2', () => process.stdin.on('data', () => {}));
setInterval(() => {}, 1000);
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'ready' }) + '\\n');
`;

const LIMIT = 64 * 1024;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('stdin of a server that does not read it (found by a review)', () => {
  it('holds at most 4 × maxLineBytes for it: further sends fail, saying why, and are taken again once it reads', async () => {
    const t = new StdioTransport({ command: process.execPath, args: ['-e', NEVER_READS], env: {}, maxLineBytes: LIMIT, stopGraceMs: 200, logger: createLogger('silent') });
    const ready = new Promise<void>((resolve) => (t.onmessage = () => resolve()));
    await t.start();
    try {
      await ready;
      await fill(t);
    } finally {
      await t.close();
    }
  });
});

async function fill(t: StdioTransport): Promise<void> {
  const big = 'x'.repeat(16 * 1024);
  const refused: Error[] = [];
  const pending: Array<Promise<void>> = [];
  // 4 MiB in all, each message in a turn of its own (a batch each): far past the pipe and the limit (256 KiB).
  for (let i = 0; i < 256; i++) {
    pending.push(t.send({ jsonrpc: '2.0', method: 'notifications/message', params: { i, big } }).catch((err: Error) => void refused.push(err)));
    await turn();
  }
  await turn();
  assert.ok(refused.length > 0, 'every message was kept for a server that reads none of them');
  // What was accepted: the limit beyond what the kernel holds for the pipe (a socket pair's buffer, some
  // 200 KiB here; it depends on the host), far from the 4 MiB sent.
  const accepted = 256 - refused.length;
  assert.ok(accepted * big.length < 1024 * 1024, `${accepted} messages of 16 KiB kept`);
  assert.match(refused[0]!.message, /has not read \d+ bytes of what the gateway sent it, more than 4 × maxLineBytes \(262144\): it is not reading its stdin/);
  // Once it reads, the kept messages leave and new ones are taken.
  process.kill(t.pid!, 'SIGUSR2');
  await Promise.all(pending);
  await t.send({ jsonrpc: '2.0', method: 'notifications/message', params: { after: true } });
}
