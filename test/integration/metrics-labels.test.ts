// Label values a client chooses: a prefixed endpoint splits a tool or prompt name at "__" to find its
// upstream, and that prefix was the upstream label of the request metrics (and the audit line's upstream)
// whether or not the endpoint had such an upstream; and while an upstream could not list its tools (down,
// restarting), any tool name called on it was a tool label. Each made-up name a new series. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

describe('metrics: label values a client chooses', () => {
  it('an unknown upstream prefix in a tool or prompt name is no upstream label (nor the audit line\'s upstream)', async () => {
    const lines: string[] = [];
    const gw = await startGateway(
      {
        tenants: [{ name: 'anonymous', endpoints: ['*'] }],
        upstreams: [
          { name: 'one', transport: 'stdio', ...FIXTURE },
          { name: 'two', transport: 'stdio', ...FIXTURE },
        ],
        endpoints: [{ path: '/mcp', upstreams: ['one', 'two'] }],
      },
      { logLines: lines },
    );
    try {
      const client = await connectClient(gw, 'streamable-http');
      for (let i = 0; i < 3; i++) await assert.rejects(client.callTool({ name: `made-up-upstream-${i}__echo`, arguments: {} }));
      await assert.rejects(client.getPrompt({ name: 'made-up-upstream-p__greet' }));
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.ok(text.includes('switchboard_requests_total{method="tools/call"'), text);
      assert.doesNotMatch(text, /made-up-upstream/, 'a client-chosen prefix became a label value');
      await until('the audit lines', () => lines.filter((l) => l.includes('"audit":true')).length >= 4);
      const audit = lines.filter((l) => l.includes('"audit":true')).map((l) => JSON.parse(l) as Record<string, unknown>);
      for (const a of audit) assert.equal(a.upstream, undefined, JSON.stringify(a));
      await client.close();
    } finally {
      await gw.close();
    }
  });

  it('a tool name is no tool label while its upstream cannot say whether the tool exists (unreachable)', async () => {
    const gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      // Nothing listens on port 9 (discard): the upstream stays unreachable, its catalogue unknown.
      upstreams: [{ name: 'remote', transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp', sharing: 'shared', era: 'legacy', healthCheck: { intervalMs: 0 } }],
      endpoints: [{ path: '/mcp', upstreams: ['remote'] }],
    });
    try {
      const client = await connectClient(gw, 'streamable-http');
      for (let i = 0; i < 3; i++) await assert.rejects(client.callTool({ name: `made-up-tool-${i}`, arguments: {} }), /could not be reached|no running instance/);
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.match(text, /switchboard_tool_calls_total\{tool="unknown",outcome="error"\} 3/, text);
      assert.doesNotMatch(text, /made-up-tool/, 'a client-chosen tool name became a label value');
      await client.close();
    } finally {
      await gw.close();
    }
  });

  it('nor a long one, or one on an endpoint with renames (named at the tools stage, which failed apart)', async () => {
    const gw = await startGateway({
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'remote', transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp', sharing: 'shared', era: 'legacy', healthCheck: { intervalMs: 0 } }],
      endpoints: [{ path: '/mcp', upstreams: ['remote'] }],
    });
    try {
      const client = await connectClient(gw, 'streamable-http');
      // At maxToolNameLength (64) or longer, a name goes through the tools stage's own lookup of exposed names.
      for (let i = 0; i < 3; i++) await assert.rejects(client.callTool({ name: `made-up-tool-${i}-${'x'.repeat(64)}`, arguments: {} }), /could not be reached|no running instance/);
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.match(text, /switchboard_tool_calls_total\{tool="unknown",outcome="error"\} 3/, text);
      assert.doesNotMatch(text, /made-up-tool/, 'a client-chosen tool name became a label value');
      await client.close();
    } finally {
      await gw.close();
    }
  });
});
