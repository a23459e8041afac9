// Two 2025 sessions of one shared upstream, each with its own logging/setLevel: each gets the log messages of
// its calls at and above its own level. The upstream keeps one level for its one connection, and it was the
// level of whichever session set one last: a session that asked for errors only was sent every info line of
// its calls once another asked for debug, and one that asked for debug none once another asked for errors.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

/** The levels of the log messages `client` is sent while its call of the fixture's logging tool runs. */
async function levelsOfCall(client: Client): Promise<string[]> {
  const levels: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void levels.push(n.params.level));
  await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  return levels;
}

describe('logging/setLevel of sessions sharing an upstream', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw.close());

  it('each session is sent what its own level lets through, whichever set its level last', async () => {
    const quiet = await connectClient(gw, 'streamable-http', { name: 'quiet' });
    const verbose = await connectClient(gw, 'streamable-http', { name: 'verbose' });
    try {
      await quiet.setLoggingLevel('error');
      await verbose.setLoggingLevel('debug');
      assert.deepEqual(await levelsOfCall(quiet), [], 'the session that asked for errors only gets no info lines');
      await quiet.setLoggingLevel('error');
      assert.deepEqual(await levelsOfCall(verbose), ['info', 'info', 'info'], 'the session that asked for debug gets the info lines');
    } finally {
      await quiet.close();
      await verbose.close();
    }
  });
});
