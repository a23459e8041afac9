// subscriptions/listen (labelled in the method table) was answered by the modern service, not the request
// pipeline, and counted nowhere, neither a stream ended for modern.listensPerPrincipal (an error the
// client gets) nor one its client closed. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURE, startGateway } from '../helpers/gateway.js';
import { openListen } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

const count = async (url: string, outcome: string) => {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => l.startsWith(`switchboard_requests_total{method="subscriptions/listen",endpoint="/mcp",upstream="none",outcome="${outcome}",protocol_era="modern"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('metrics: subscriptions/listen', () => {
  it('a stream ended for modern.listensPerPrincipal counts as an error, one its client closed as cancelled, once each', async () => {
    const gw = await startGateway({
      modern: { listensPerPrincipal: 1 },
      tenants: [{ name: 'anonymous', endpoints: ['*'] }],
      upstreams: [{ name: 'one', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['one'] }],
    });
    try {
      const a = await openListen(gw.url(), 'a', { toolsListChanged: true });
      assert.equal((await a.next()).method, 'notifications/subscriptions/acknowledged');
      const b = await openListen(gw.url(), 'b', { toolsListChanged: true });
      assert.equal((await b.next()).method, 'notifications/subscriptions/acknowledged');
      assert.match((await a.next()).error.message, /listensPerPrincipal/);
      a.close();
      assert.equal(await count(gw.app.metricsUrl!, 'error'), 1);
      b.close();
      await until('the closed stream is counted', async () => (await count(gw.app.metricsUrl!, 'cancelled')) === 1);
      assert.equal(await count(gw.app.metricsUrl!, 'error'), 1, 'the ended stream is not counted again when its client closes it');
    } finally {
      await gw.close();
    }
  });
});
