import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../src/observability/logger.js';
import { parseConfig } from '../../../src/config/load.js';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import { StdioTransport } from '../../../src/upstream/stdio-transport.js';
import type { UpstreamCaller } from '../../../src/upstream/upstream-caller.js';
import type { UpstreamInstance } from '../../../src/upstream/upstream-instance.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { until } from '../../helpers/wait.js';

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
  // What the gateway owes it (answers to its requests) still goes past the limit, but not without bound either.
  let owedRefused = 0;
  for (let i = 0; i < 64; i++) pending.push(t.send({ jsonrpc: '2.0', id: i, result: { big } }).catch(() => void owedRefused++));
  await turn();
  assert.ok(owedRefused > 0 && (64 - owedRefused) * big.length <= 4 * LIMIT, `${64 - owedRefused} answers of 16 KiB kept past the limit`);
  // Once it reads, the kept messages leave and new ones are taken.
  process.kill(t.pid!, 'SIGUSR2');
  await Promise.all(pending);
  await t.send({ jsonrpc: '2.0', method: 'notifications/message', params: { after: true } });
}

// A server busy with a long call, not reading its stdin meanwhile: it has asked the client something for
// that call (sampling) and stops reading until SIGUSR2. It remembers what it reads, for tools/call `heard`.
const BUSY_SERVER = `
const heard = [];
setInterval(() => {}, 1000); // alive while it does not read
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const lines = require('node:readline').createInterface({ input: process.stdin });
process.on('SIGUSR2', () => lines.resume());
lines.on('line', (line) => {
  const m = JSON.parse(line);
  heard.push(m.method ?? 'answer:' + m.id);
  if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'busy', version: '1' } } });
  if (m.method !== 'tools/call') return;
  if (m.params.name === 'heard') return send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(heard) }] } });
  if (m.params.name !== 'long') return send({ jsonrpc: '2.0', id: m.id, result: { content: [] } });
  send({ jsonrpc: '2.0', id: 'sample-1', method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } });
  lines.pause();
});
`;

describe('a stdio server busy on a long call, not reading its stdin (found by a review)', () => {
  it('refuses new calls as busy without opening its circuit, and still gets the cancellations and answers the gateway owes it', async () => {
    let transport!: StdioTransport;
    const config = parseConfig(
      { upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, sharing: 'shared', healthCheck: { intervalMs: 0 }, concurrency: { max: 1000 }, circuitBreaker: { failureThreshold: 3 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] },
      'test',
      {},
    );
    const pool = new UpstreamPool(config.upstreams[0]!, createLogger('silent'), () => (transport = new StdioTransport({ command: process.execPath, args: ['-e', BUSY_SERVER], env: {}, maxLineBytes: 1024, stopGraceMs: 200, logger: createLogger('silent') })));
    let answer!: (result: Record<string, unknown>) => void;
    const asked: string[] = [];
    const caller: UpstreamCaller = {
      id: 's',
      tenant: 't',
      clientRequest: (method) => (asked.push(method), new Promise((resolve) => (answer = resolve))),
      clientNotify: () => {},
    };
    await pool.start();
    try {
      const inst = pool.instanceFor(caller);
      const stop = new Cancellation();
      const long = inst.request('tools/call', { name: 'long', arguments: {} }, { caller, signal: stop });
      long.catch(() => {});
      await until('the server asked its question and stopped reading', () => asked.length === 1);
      const refused = await fillUntilRefused(inst, caller);
      assert.deepEqual([...new Set(refused)], ['SWB_UPSTREAM_BUSY'], 'a refused call is the server being busy');
      assert.equal(inst.circuit, 'closed', 'refusals for a busy server opened its circuit');
      // Owed to the server, refused or not: the answer to its question, the cancellation of its long call.
      answer({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' });
      stop.abort('user pressed stop');
      await assert.rejects(long);
      await turn();
      process.kill(transport.pid!, 'SIGUSR2');
      const heard = async () => {
        const r = await inst.request('tools/call', { name: 'heard', arguments: {} }, { caller }).catch(() => undefined);
        return r ? (JSON.parse((r.content as Array<{ text: string }>)[0]!.text) as string[]) : [];
      };
      await until('the server read the answer and the cancellation', async () => {
        const got = await heard();
        return got.includes('answer:sample-1') && got.includes('notifications/cancelled');
      });
      assert.equal(inst.circuit, 'closed');
    } finally {
      await pool.close();
    }
  });
});

/** Calls of 16 KiB, each in a turn of its own, until at least 10 are refused: the codes they failed with. */
async function fillUntilRefused(inst: UpstreamInstance, caller: UpstreamCaller): Promise<string[]> {
  const refused: string[] = [];
  const big = 'x'.repeat(16 * 1024);
  for (let i = 0; i < 1000 && refused.length < 10; i++) {
    inst.request('tools/call', { name: 'big', arguments: { big } }, { caller }).catch((err: { code?: string }) => void refused.push(String(err.code)));
    await turn();
    await turn();
  }
  assert.ok(refused.length >= 10, 'the server took everything');
  return refused;
}
