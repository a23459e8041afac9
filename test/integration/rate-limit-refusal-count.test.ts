// switchboard_rate_limited_total{limit="requests_per_second"} counts requests refused for the tenant's
// requestsPerSecond, as its help says ("Requests refused by a limit") and as the audit does: a 2025-03-26
// batch refused whole is as many refused requests as it holds (each audited call of it gets its line).
// Before, a refusal counted one whatever the batch held, so a client sending its calls in batches showed
// a fraction of its refused requests to an operator's alert. A real gateway on a real port in front of
// the catalogue stdio server; auth off, so the caller is tenant "anonymous". The bucket refills at one
// token per 100 s: nothing refills while the test runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { post } from '../helpers/http-edge.js';
import { openRateLimitedSession, toolsListBatch as batch } from '../helpers/rate-limited-session.js';

const BURST = 4;

function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('requests refused for the tenant request rate in metrics', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let sid: string;
  const refusedSoFar = async () => sample(await (await fetch(gw.app.metricsUrl!)).text(), 'switchboard_rate_limited_total', { limit: 'requests_per_second' });

  before(async () => {
    // One token: initialize (three are left).
    ({ gw, sid } = await openRateLimitedSession(BURST));
  });
  after(async () => {
    await gw?.close();
  });

  it('a batch refused whole counts each of its requests in switchboard_rate_limited_total', async () => {
    const before = await refusedSoFar();
    const refused = await post(gw, batch('b', BURST), { sid });
    assert.equal(refused.status, 429, await refused.clone().text());
    await refused.text();
    assert.equal((await refusedSoFar()) - before, BURST, 'a batch of four refused requests');
    const over = await post(gw, batch('o', BURST + 2), { sid });
    assert.equal(over.status, 429);
    await over.text();
    assert.equal((await refusedSoFar()) - before, BURST + BURST + 2, 'and one larger than the burst: six more');
  });
});
