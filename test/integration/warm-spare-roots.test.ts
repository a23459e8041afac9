// A per-session upstream's warm spare is initialized before any session owns it, and server-everything
// asks for roots at once (it was told roots are on offer). The gateway refuses that early ask (nobody's
// roots to give) and later tells the instance roots/list_changed once its session is ready. The quick
// start logged a warning on every start and on every spare, saying "set sharing: per-session" of an
// upstream that already was, and counted it in switchboard_unattributed_requests_total, the metric of a
// *shared* upstream's requests that no session owned.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

describe('a per-session warm spare asking for roots before it has a session', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  const logLines: string[] = [];

  before(async () => {
    gw = await startGateway({ upstreams: [everythingUpstream('everything', 'per-session')], endpoints: [{ path: '/mcp', upstreams: ['everything'] }] }, { logLines });
  });
  after(async () => {
    await gw?.close();
  });

  it('is refused without a warning that says to do what is already done, and is not counted as a shared upstream\'s unattributed request', async () => {
    // The spare's own log line says it asked and was refused: the refusal has happened once it is there.
    await until('the spare asked for roots and was refused', () => logLines.some((l) => l.includes('Failed to request roots')), 20_000);
    const advice = logLines.filter((l) => l.includes('"level":40') && l.includes('roots/list'));
    assert.deepEqual(advice, [], 'no warning about the spare\'s roots/list');
    const metrics = await (await fetch(gw.app.metricsUrl!)).text();
    assert.doesNotMatch(metrics, /switchboard_unattributed_requests_total\{[^}]*method="roots\/list"/);
  });
});
