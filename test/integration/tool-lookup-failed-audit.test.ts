// A tools/call whose exposed name the tools stage looks up (an endpoint with curation, a search-mode
// endpoint's call_tool, a name at maxToolNameLength or longer) while its upstream cannot list its tools
// (unreachable, restarting): the failed lookup was answered by the tools stage itself, before policy, and
// audited as allowed by rule "tools.call" whatever the tenant's rules said (a denied tool included, or, through
// call_tool, as "call_tool" with no word of the tool it named). Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

type Line = Record<string, unknown>;

describe('a tools/call whose name could not be looked up (its upstream down) is judged and audited as any call', () => {
  it('a denied tool is audited as denied (and answered as unknown); an allowed one under its canonical name', async () => {
    const lines: string[] = [];
    const gw = await startGateway(
      {
        tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { deny: ['delete_repo'] } }],
        // Nothing listens on port 9 (discard): the upstream stays unreachable, its catalogue unknown.
        upstreams: [{ name: 'remote', transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp', sharing: 'shared', era: 'legacy', healthCheck: { intervalMs: 0 } }],
        endpoints: [{ path: '/mcp', upstreams: ['remote'], tools: { overrides: { read_repo: { name: 'look' } } } }],
      },
      { logLines: lines },
    );
    try {
      const client = await connectClient(gw, 'streamable-http');
      await assert.rejects(client.callTool({ name: 'delete_repo', arguments: {} }), /Unknown tool|not found/i);
      await assert.rejects(client.callTool({ name: 'look', arguments: {} }), /could not be reached|no running instance/);
      const audit = (): Line[] => lines.filter((l) => l.includes('"audit":true')).map((l) => JSON.parse(l) as Line);
      await until('two audit lines', () => audit().length >= 2);
      const [denied, allowed] = audit();
      assert.equal(denied!.name, 'delete_repo');
      assert.equal(denied!.decision, 'deny', JSON.stringify(denied));
      assert.equal(denied!.outcome, 'denied', JSON.stringify(denied));
      assert.equal(allowed!.name, 'read_repo', JSON.stringify(allowed));
      assert.equal(allowed!.decision, 'allow');
      assert.notEqual(allowed!.rule, 'tools.call', JSON.stringify(allowed));
      assert.equal(allowed!.outcome, 'error');
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.match(text, /switchboard_policy_denials_total\{reason="deny_rule"\} 1/, text);
      await client.close();
    } finally {
      await gw.close();
    }
  });

  it("the endpoint's rename of a tool the tenant's own curation leaves out is an unknown name, as when the upstream is up", async () => {
    const lines: string[] = [];
    const gw = await startGateway(
      {
        upstreams: [{ name: 'remote', transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp', sharing: 'shared', era: 'legacy', healthCheck: { intervalMs: 0 } }],
        endpoints: [{ path: '/mcp', upstreams: ['remote'], prefix: 'always', tools: { overrides: { remote__read_repo: { name: 'look' } }, tenants: { anonymous: { exclude: ['remote__read_repo'] } } } }],
      },
      { logLines: lines },
    );
    try {
      const client = await connectClient(gw, 'streamable-http');
      // Not "could not be reached": that told the caller "look" is a name on this endpoint, in another tenant's view.
      await assert.rejects(client.callTool({ name: 'look', arguments: {} }), /Tool look not found/);
      const audit = (): Line[] => lines.filter((l) => l.includes('"audit":true')).map((l) => JSON.parse(l) as Line);
      await until('the audit line', () => audit().length >= 1);
      assert.equal(audit()[0]!.name, 'look', 'audited as sent: not as a tool its view does not have');
      await client.close();
    } finally {
      await gw.close();
    }
  });

  it('a call_tool naming a denied tool is audited as that tool, denied', async () => {
    const lines: string[] = [];
    const gw = await startGateway(
      {
        tenants: [{ name: 'anonymous', endpoints: ['*'], tools: { deny: ['delete_repo'] } }],
        upstreams: [{ name: 'remote', transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp', sharing: 'shared', era: 'legacy', healthCheck: { intervalMs: 0 } }],
        endpoints: [{ path: '/mcp', upstreams: ['remote'], tools: { exposure: 'search' } }],
      },
      { logLines: lines },
    );
    try {
      const client = await connectClient(gw, 'streamable-http');
      await assert.rejects(client.callTool({ name: 'call_tool', arguments: { name: 'delete_repo', arguments: {} } }), /Unknown tool|not found/i);
      const audit = (): Line[] => lines.filter((l) => l.includes('"audit":true')).map((l) => JSON.parse(l) as Line);
      await until('the audit line', () => audit().length >= 1);
      const [line] = audit();
      assert.equal(line!.name, 'delete_repo', JSON.stringify(line));
      assert.equal(line!.decision, 'deny');
      assert.equal(line!.outcome, 'denied');
      await client.close();
    } finally {
      await gw.close();
    }
  });
});
