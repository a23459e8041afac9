// Progress on a request an upstream put to the client (sampling with a progress token): the client's
// notifications/progress reach the upstream under the upstream's own token, as the spec lets either side
// report progress on a request it received. Real gateway from a real file, the crossing fixture (stdio),
// the official SDK client, which reports progress from its sampling handler.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';

const CROSSING = join(import.meta.dirname, '..', 'fixtures', 'crossing-server.mjs');

describe('progress the client reports on a request an upstream put to it', () => {
  let fg: FileGateway;
  let client: Client;
  before(async () => {
    fg = await fileGateway('swb-client-progress-', {
      server: { host: '127.0.0.1', port: 0 },
      metrics: { enabled: false },
      logging: { level: process.env.LOG_LEVEL ?? 'silent' },
      pinning: { mode: 'off' },
      upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, args: [CROSSING], sandbox: 'none', sharing: 'per-session' }],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    });
    client = await connectClient(fg.gw, 'streamable-http');
  });
  after(async () => {
    await client?.close().catch(() => {});
    await fg?.close();
  });

  it('reaches the upstream with the upstream\'s own progress token', async () => {
    const tokens: unknown[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
      const token = req.params._meta?.progressToken;
      tokens.push(token);
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } });
      return { model: 'm', role: 'assistant', content: { type: 'text', text: 'done' } };
    });
    const r = await client.callTool({ name: 'sample_with_progress', arguments: {} });
    assert.equal(tokens.length, 1);
    assert.notEqual(tokens[0], undefined, 'the client was asked for progress');
    assert.deepEqual(JSON.parse(textOf(r)), [{ method: 'notifications/progress', params: { progressToken: 'pt-7', progress: 1, total: 2 } }]);
  });
});
