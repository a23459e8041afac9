// Progress on a request an upstream put to the client (sampling with a progress token): the client's
// notifications/progress reach the upstream under the upstream's own token, as the spec lets either side
// report progress on a request it received. And a client's cancel of the call such a request was asked
// for ends that request too, though the upstream goes on waiting for its answer. Real gateway from a real file, the crossing fixture (stdio),
// the official SDK client, which reports progress from its sampling handler.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

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

  it('a cancel of the call ends the question asked for it: the client is told, the upstream answered', async () => {
    let asked = false;
    let cancelled = false;
    client.setRequestHandler(CreateMessageRequestSchema, (_req, extra) => {
      asked = true;
      // A person still reading the question: answered only if the gateway takes it back.
      return new Promise((_resolve, reject) => extra.signal.addEventListener('abort', () => ((cancelled = true), reject(new Error('taken back')))));
    });
    const stop = new AbortController();
    const call = client.callTool({ name: 'sample_with_progress', arguments: {} }, undefined, { signal: stop.signal });
    await until('the question reached the client', () => asked);
    stop.abort('the user gave up');
    await assert.rejects(call);
    await until('the client was told the question is withdrawn', () => cancelled);
    // And the upstream, still waiting on it, was answered (an error) rather than left to its own timeout.
    const heard = async () => JSON.parse(textOf(await client.callTool({ name: 'heard', arguments: {} }))) as Array<Record<string, unknown>>;
    await until('the upstream was answered', async () => (await heard()).some((h) => h.answer === 'sample-p' && h.error !== undefined));
  });
});

