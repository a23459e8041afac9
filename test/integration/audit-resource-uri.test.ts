// A resource URI with a password in it (servers name resources by connection strings) is recorded in the
// audit log and in traces without the password: both are read by more people than the credentials are
// meant for. The rest of the URI stays, since it is what tells resources apart. A client-sized name or
// URI is cut: the audit ring and the console's batches keep lines in memory.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

describe('the audit log of a resource read whose URI holds a password', () => {
  let gw: RunningGateway;
  let client: Client;
  const logLines: string[] = [];
  before(async () => {
    gw = await startGateway(
      {
        audit: { enabled: true },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines },
    );
    client = await connectClient(gw, 'streamable-http');
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  it('names the resource with its password replaced, and no line holds the password', async () => {
    await assert.rejects(client.readResource({ uri: 'postgres://app:s3cret-pw@db.internal:5432/orders/schema?sslmode=require' }));
    const audit = logLines.map((l) => JSON.parse(l)).filter((l) => l.audit === true && l.method === 'resources/read');
    assert.equal(audit.length, 1, logLines.join('\n'));
    assert.equal(audit[0].name, 'postgres://app:[redacted]@db.internal:5432/orders/schema?sslmode=require');
    assert.ok(!logLines.some((l) => l.includes('s3cret-pw')), 'the password is in no log line');
  });

  it('cuts a client-sized tool name and resource URI in the audit line (the ring keeps 500 lines)', async () => {
    await assert.rejects(client.callTool({ name: `t${'n'.repeat(200_000)}`, arguments: {} }));
    await assert.rejects(client.readResource({ uri: `file:///${'u'.repeat(200_000)}` }));
    const audit = logLines.map((l) => JSON.parse(l)).filter((l) => l.audit === true && (l.method === 'tools/call' || l.method === 'resources/read') && String(l.name).length > 100);
    assert.equal(audit.length, 2, logLines.map((l) => l.slice(0, 300)).join('\n'));
    for (const line of audit) {
      assert.ok(String(line.name).length <= 2100, `${line.method}: a name of ${String(line.name).length} characters`);
      assert.ok(String(line.name).endsWith('…'), `${line.method}: a cut name is marked`);
    }
    assert.ok(audit.find((l) => l.method === 'tools/call')!.name.length <= 300, 'a tool name is cut like a span\'s');
  });
});
