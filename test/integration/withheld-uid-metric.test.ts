// A sandbox user id withheld from the pool (its processes could not be made sure gone) was said only by an
// error log line (found by a review, 2026-12-07): an operator alerting on metrics never heard of a pool
// shrinking for good. Now switchboard_sandbox_uids_withheld_total{upstream} counts them.
// A real root gateway on a real port with a sandboxed stdio upstream that exits at once (each start gives
// its pooled uid back), its metrics scraped over HTTP. Only the reap's verdict is the test's (the gateway's
// uidReaper): a process of the uid that outlives every kill cannot be made on demand.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { until } from '../helpers/wait.js';

const root = process.getuid?.() === 0;
const scrape = async (url: string) => (await fetch(url)).text();

describe('metrics: switchboard_sandbox_uids_withheld_total', { skip: !root && 'needs root (the uid pool)' }, () => {
  let app: App;
  let reaped = 0;
  before(async () => {
    const config = parseConfig({
      metrics: { port: 0 },
      server: { host: '127.0.0.1', port: 0 },
      logging: { level: 'silent' },
      upstreams: [
        { name: 'quits', transport: 'stdio', command: '/bin/true', sandbox: { type: 'limits' }, sharing: 'shared', pool: { size: 1 } },
        { name: 'kept', transport: 'stdio', command: '/bin/true', sandbox: 'none', sharing: 'shared', pool: { size: 1 } },
      ],
      endpoints: [{ path: '/mcp', upstreams: ['quits', 'kept'] }],
    });
    const uidReaper = async () => (reaped++, { found: 1, cleared: false, reason: 'a process of the uid outlived its kill' });
    app = await buildApp(config, { logger: createLogger('silent'), uidReaper });
    await app.listen();
  });
  after(() => app?.close());

  it('counts each uid withheld from the pool, by upstream', async () => {
    const counted = () => scrape(app.metricsUrl!).then((t) => Number(/^switchboard_sandbox_uids_withheld_total\{upstream="quits"\} (\d+)$/m.exec(t)?.[1] ?? 0));
    await until('a withheld uid is counted', async () => (await counted()) >= 1, 20_000);
    const text = await scrape(app.metricsUrl!);
    assert.match(text, /^# TYPE switchboard_sandbox_uids_withheld_total counter$/m);
    assert.doesNotMatch(text, /switchboard_sandbox_uids_withheld_total\{upstream="kept"\}/, 'an unsandboxed upstream takes no uid');
    assert.ok((await counted()) <= reaped, 'one per uid withheld');
  });
});
