// An upstream that asks the client something (sampling here) with a progress token is sent the client's
// notifications/progress on it (the spec's progress either way). They take no requestsPerSecond token, and
// each was written to the upstream as it came: one client's loop had a *shared* instance, which serves other
// tenants' calls on the same pipe, sent as many as it could write. Now they reach the upstream at a bounded
// rate per question (a burst, then one a second), those over it folded into the latest, which goes when the
// rate allows unless the client's answer came first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf, type ClientTransportKind } from '../helpers/sdk.js';

const FIXTURE = { transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/notice-counting-server.mjs'], sandbox: 'none' as const };
const N = 500;
/** At most what the rate passes on in `ms`: the burst (10), one a second after it, and one folded. */
const bound = (ms: number) => 10 + Math.ceil(ms / 1000) + 1;

describe('a client\'s progress on a shared upstream\'s question reaches it at a bounded rate', { timeout: 120_000 }, () => {
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'shared', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['shared'] }],
    });
  });
  after(async () => {
    await gw?.close();
  });

  for (const kind of ['streamable-http', 'sse'] as ClientTransportKind[]) {
    it(`${kind}: 500 progress notifications while the question is open`, async () => {
      const client = await connectClient(gw, kind);
      try {
        const progressSeen = async () => JSON.parse(textOf(await client.callTool({ name: 'notices' })))['notifications/progress'] ?? 0;
        const before = await progressSeen();
        let elapsed = 0;
        client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
          const progressToken = req.params._meta!.progressToken!;
          const started = Date.now();
          for (let i = 1; i <= N; i++) await client.notification({ method: 'notifications/progress', params: { progressToken, progress: i, total: N } });
          elapsed = Date.now() - started;
          return { model: 'm', role: 'assistant', content: { type: 'text', text: 'done' } };
        });
        assert.match(textOf(await client.callTool({ name: 'ask' })), /done/);
        const seen = (await progressSeen()) - before;
        assert.ok(seen >= 1, 'progress is passed on');
        assert.ok(seen <= bound(elapsed), `${seen} of ${N} passed on in ${elapsed} ms`);
      } finally {
        await client.close();
      }
    });
  }
});
