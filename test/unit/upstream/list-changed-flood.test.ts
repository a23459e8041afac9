// An upstream's list_changed notifications say only "list again": the router tells every session the
// instance serves of each one (each kept in its event log, in Redis with a store) and publishes it to
// every other replica. A server writing nothing else (some 60 bytes each, as fast as its pipe takes them)
// had each of them multiplied so. A real child process behind a real instance.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamInstance } from '../../../src/upstream/upstream-instance.js';
import { until } from '../../helpers/wait.js';

const EACH = 10_000;

/** Initializes; once initialized, sends EACH tools and EACH prompts list_changed in a few writes, then a log message. */
const SERVER = `
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, logging: {} }, serverInfo: { name: 'churn', version: '1' } } });
  else if (m.method === 'notifications/initialized') {
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }).concat('\\n').repeat(${EACH}));
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' }).concat('\\n').repeat(${EACH}));
    send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'done' } });
  } else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, result: m.method === 'tools/list' ? { tools: [] } : {} });
});
`;

describe('a flood of list_changed from an upstream', () => {
  it('is passed on at a bounded rate, for each kind, and its last one is always told', async () => {
    const doc = { upstreams: [{ name: 'churn', transport: 'stdio', command: process.execPath, args: ['-e', SERVER], sandbox: 'none', healthCheck: { intervalMs: 0 } }], endpoints: [{ path: '/mcp', upstreams: ['churn'] }] };
    const u = parseConfig(doc, 'test', {}, '/').upstreams[0]!;
    const transports = new UpstreamTransports();
    const inst = new UpstreamInstance(u, createLogger('silent'), transports.create);
    const told = new Map<string, number>();
    let done = false;
    inst.on('notification', (method: string) => {
      if (method === 'notifications/message') done = true;
      else told.set(method, (told.get(method) ?? 0) + 1);
    });
    try {
      await inst.start();
      await until('the log message after the flood', () => done);
      const tools = () => told.get('notifications/tools/list_changed') ?? 0;
      const prompts = () => told.get('notifications/prompts/list_changed') ?? 0;
      const [toolsAtEnd, promptsAtEnd] = [tools(), prompts()];
      // A burst of ten passes as it comes, then one a second (generous: the flood may take a while to read).
      assert.ok(toolsAtEnd <= 50 && promptsAtEnd <= 50, `passed on: ${toolsAtEnd} tools and ${promptsAtEnd} prompts list_changed for ${EACH} of each`);
      // The last change is always told: those over the rate go as one, when the rate allows.
      await until('the held-back list_changed of each kind', () => tools() === toolsAtEnd + 1 && prompts() === promptsAtEnd + 1);
    } finally {
      await inst.stop();
    }
  });
});
