// switchboard_config_watch_up read 0 ("the watch is down: edits are not applied") on every gateway that
// does not watch its config file at all (admin.watchConfig off, the default): an alert on it fired for
// every such gateway, and a dashboard showed a watch that never existed as failing. It is now exported
// only while a watch is configured, as the README's Metrics table says. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileGateway } from '../helpers/file-gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const doc = (watchConfig: boolean) => ({
  server: { host: '127.0.0.1', port: 0 },
  metrics: { port: 0 },
  admin: { watchConfig },
  tenants: [{ name: 'anonymous', endpoints: ['*'] }],
  upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
  endpoints: [{ path: '/mcp', upstreams: ['one'] }],
});

const scrape = async (url: string, accept?: string) => (await fetch(url, accept ? { headers: { accept } } : {})).text();

describe('metrics: switchboard_config_watch_up', () => {
  it('is absent without admin.watchConfig (Prometheus text and OpenMetrics)', async () => {
    const g = await fileGateway('swb-watch-metric-', doc(false));
    try {
      for (const accept of [undefined, 'application/openmetrics-text']) {
        const text = await scrape(g.app.metricsUrl!, accept);
        assert.match(text, /^switchboard_sessions_active|^# TYPE switchboard_sessions_active/m, text);
        assert.doesNotMatch(text, /^switchboard_config_watch_up /m, text);
      }
    } finally {
      await g.close();
    }
  });

  it('reads 1 while the config file is watched', async () => {
    const g = await fileGateway('swb-watch-metric-', doc(true));
    try {
      await until('the watch is up', async () => /^switchboard_config_watch_up 1$/m.test(await scrape(g.app.metricsUrl!)));
    } finally {
      await g.close();
    }
  });
});
