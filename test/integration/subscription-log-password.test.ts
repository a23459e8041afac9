// Real gateway from a real file; test/fixtures/subscribe-refusing-server.mjs, replaced by the reload with
// the same server told to refuse. A reload that replaced an upstream makes each session's resource subscriptions again on the new
// instance; one it refuses is logged at warn. That line carried the resource URI as the client sent
// it, password and all (servers name resources by connection strings: postgres://app:secret@db/...),
// where the audit line and the span already keep it out; and the upstream's error, which quoted it.
// Found by a review.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { checkConfigFile } from '../../src/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const SERVER = (...flags: string[]) => ({ command: process.execPath, args: ['test/fixtures/subscribe-refusing-server.mjs', ...flags], sandbox: 'none' });
const doc = (upstream: Record<string, unknown>) => ({
  server: { host: '127.0.0.1', port: 0 },
  metrics: { enabled: false },
  logging: { level: 'info' },
  pinning: { mode: 'off' },
  tenants: [{ name: 'anonymous', endpoints: ['*'] }],
  upstreams: [{ name: 'db', transport: 'stdio', pool: { size: 1 }, ...upstream }],
  endpoints: [{ path: '/mcp', upstreams: ['db'] }],
});

describe('a subscription a replaced upstream refuses is logged without the URI\'s password', () => {
  it('the warn line names the URI with its password redacted, in the URI and in the error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-sub-log-'));
    const file = join(dir, 'switchboard.yaml');
    const lines: string[] = [];
    writeFileSync(file, JSON.stringify(doc(SERVER())));
    const app = await buildApp(checkConfigFile(file).config, { configFile: file, logger: createLogger('info', { write: (l: string) => void lines.push(l) }) });
    try {
      const base = (await app.listen()).replace('localhost', '127.0.0.1');
      const client = await connectClient({ app, base, url: (p = '/mcp') => new URL(p, base), close: () => app.close() }, 'streamable-http');
      await client.subscribeResource({ uri: 'postgres://app:s3cretpw@db.internal/orders' });
      writeFileSync(file, JSON.stringify(doc(SERVER('--refuse'))));
      const { report } = await app.reload('test');
      assert.equal(report.result, 'applied', JSON.stringify(report));
      await until('the warn line', () => lines.some((l) => l.includes('subscription could not be made')));
      const line = lines.find((l) => l.includes('subscription could not be made'))!;
      assert.match(line, /postgres:\/\/app:\[redacted\]@db\.internal\/orders/, line);
      assert.doesNotMatch(line, /s3cretpw/, line);
      await client.close();
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
