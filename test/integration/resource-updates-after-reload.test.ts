// A resource subscription made under rules a reload has since narrowed: the tenant may no longer read the
// URI, so its updates no longer reach the client; a URI still allowed keeps its updates (found by a review).
// Real gateway from a real file, the crossing fixture (a subscription with ?updateAfterMs=N gets
// notifications/resources/updated N ms later), the official SDK client.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileGateway, type FileGateway } from '../helpers/file-gateway.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const CROSSING = join(import.meta.dirname, '..', 'fixtures', 'crossing-server.mjs');
const doc = (resources: Record<string, unknown>) => ({
  server: { host: '127.0.0.1', port: 0 },
  metrics: { enabled: false },
  logging: { level: process.env.LOG_LEVEL ?? 'silent' },
  pinning: { mode: 'off' },
  tenants: [{ name: 'anonymous', endpoints: ['*'], resources }],
  upstreams: [{ name: 'u', transport: 'stdio', command: process.execPath, args: [CROSSING], sandbox: 'none', pool: { size: 1 } }],
  endpoints: [{ path: '/mcp', upstreams: ['u'] }],
});

describe('resource updates after a reload that denies the URI', () => {
  let fg: FileGateway;
  let client: Client;
  before(async () => {
    fg = await fileGateway('swb-updates-', doc({ allow: ['*'] }));
    client = await connectClient(fg.gw, 'streamable-http');
  });
  after(async () => {
    await client?.close().catch(() => {});
    await fg?.close();
  });

  it('stop for the denied URI, go on for the allowed one', async () => {
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    const denied = 'file:///secret?updateAfterMs=1500';
    const allowed = 'file:///public?updateAfterMs=1500';
    await client.subscribeResource({ uri: denied });
    await client.subscribeResource({ uri: allowed });
    fg.write(doc({ allow: ['*'], deny: ['file:///secret*'] }));
    const { report } = await fg.app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    await until('the allowed URI’s update arrived', () => updates.includes(allowed), 10_000);
    // Both were sent by the upstream at the same moment: the denied one would have come with it.
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(updates, [allowed]);
  });
});
