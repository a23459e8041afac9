// A tools/call a confirmation rule asked the user about, accepted, and then refused by the tenant's
// concurrent-request limit (the stage after confirmation): its audit line left out `confirmation`, which
// README (Audit log) promises on every call a rule asked about, so the trail showed a refusal with no word
// that the user had consented; and its latencyMs was 0 whatever the user took. Found by a review.
// label-server (test/fixtures/label-server.mjs): `sleep` holds the tenant's one slot, `label` is confirmed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const LABEL = { command: process.execPath, args: ['test/fixtures/label-server.mjs', '--label', 'v1'], sandbox: 'none' as const };

describe('a confirmed call refused by the concurrent-request limit', () => {
  it('is audited with confirmation "accepted" and the time it took', async () => {
    const lines: string[] = [];
    const gw = await startGateway(
      {
        tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { concurrentRequests: 1 }, confirm: [{ match: 'label', message: 'Ask first.' }] }],
        upstreams: [{ name: 'u', transport: 'stdio', ...LABEL, sharing: 'shared', pool: { size: 1 } }],
        endpoints: [{ path: '/mcp', upstreams: ['u'] }],
      },
      { logLines: lines },
    );
    const client = new Client({ name: 'confirm-limited', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    // The user thinks a little, then accepts.
    client.setRequestHandler(ElicitRequestSchema, async () => (await new Promise((r) => setTimeout(r, 50)), { action: 'accept', content: { confirm: true } }));
    try {
      await client.connect(new StreamableHTTPClientTransport(gw.url('/mcp')));
      const held = client.callTool({ name: 'sleep', arguments: { ms: 8000 } }).catch(() => undefined);
      const inst = [...gw.app.gateway.pools.get('u')!.instances][0]!;
      await until('the sleep call holds the slot at the upstream', () => inst.inflight === 1);
      await assert.rejects(client.callTool({ name: 'label', arguments: {} }), /requests in flight/);
      const audit = () => lines.filter((l) => l.includes('"audit":true')).map((l) => JSON.parse(l) as Record<string, unknown>);
      await until('the refused call\'s audit line', () => audit().some((a) => a.name === 'label'));
      const line = audit().find((a) => a.name === 'label')!;
      assert.equal(line.rule, 'limits.concurrentRequests', JSON.stringify(line));
      assert.equal(line.decision, 'deny');
      assert.equal(line.confirmation, 'accepted', JSON.stringify(line));
      assert.ok((line.latencyMs as number) >= 50, JSON.stringify(line));
      await client.close();
      await held;
    } finally {
      await gw.close();
    }
  });
});
