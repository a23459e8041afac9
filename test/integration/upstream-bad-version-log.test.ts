// An upstream that answers initialize with a protocol version the gateway does not speak fails to start,
// and the error (logged at every start attempt as "upstream failed to start", with the restart backoff)
// quoted the version it sent whole: any JSON value the upstream chose, of any size up to the largest
// answer the gateway reads. So did a 2026-07-28 server/discover's supportedVersions. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startLoggedRemote } from '../helpers/logged-remote.js';
import { until } from '../helpers/wait.js';

/** A remote MCP server's answers: its initialize names a 100,000-character version. */
const oddVersion = (method: string) => (method === 'initialize' ? { protocolVersion: 'v'.repeat(100_000), capabilities: {}, serverInfo: { name: 'odd', version: '1' } } : {});

describe('an upstream\'s unsupported protocol version in the log', () => {
  it('is quoted cut, not whole', async () => {
    const { lines, close } = await startLoggedRemote(oddVersion);
    try {
      await until('the failed start', () => lines.some((l) => l.includes('unsupported protocol version')));
      for (const line of lines.filter((l) => l.includes('unsupported protocol version'))) assert.ok(line.length < 2048, `a line of ${line.length} characters`);
    } finally {
      await close();
    }
  });
});
