// A resource URI with a password in it (servers name resources by connection strings) is recorded in the
// audit log and in traces without the password: both are read by more people than the credentials are
// meant for. The rest of the URI stays, since it is what tells resources apart.
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
});
