// The "upstream ready" line logged the upstream's serverInfo whole: an object the upstream chooses, of any
// shape and size (up to the largest answer the gateway reads), on every start and restart of each instance.
// A client's clientInfo is kept to its known string fields, each cut, for exactly this reason; the upstream's
// was not. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startLoggedRemote, type RemoteAnswer } from '../helpers/logged-remote.js';
import { until } from '../helpers/wait.js';

const SERVER_INFO = { name: 'bloated', version: '1', description: 'x'.repeat(200_000), padding: Array.from({ length: 5000 }, (_, i) => ({ i })) };

/** A remote MCP server's answers: its initialize answers SERVER_INFO. */
const bloated: RemoteAnswer = (method, params) => {
  if (method === 'initialize') return { protocolVersion: params!.protocolVersion, capabilities: { tools: {} }, serverInfo: SERVER_INFO };
  if (method === 'tools/list') return { tools: [] };
  return {};
};

describe('log: an upstream\'s serverInfo', () => {
  it('is logged as its known string fields, each cut, not as the object it sent', async () => {
    const { lines, close } = await startLoggedRemote(bloated);
    try {
      await until('the upstream is ready', () => lines.some((l) => l.includes('"msg":"upstream ready"')));
      const line = lines.find((l) => l.includes('"msg":"upstream ready"'))!;
      assert.ok(line.length < 2048, `an "upstream ready" line of ${line.length} characters`);
      const server = (JSON.parse(line) as { server: Record<string, unknown> }).server;
      assert.equal(server.name, 'bloated');
      assert.equal(server.version, '1');
      assert.equal(server.padding, undefined);
      assert.equal(server.description, `${'x'.repeat(256)}…`);
    } finally {
      await close();
    }
  });
});
