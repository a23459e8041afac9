// A 2026-07-28 retry whose requestState was refused (malformed, tampered, replayed, expired: what a
// forging or replaying client sends) was answered 400 -32602 SWB_REQUEST_STATE_INVALID before the
// request pipeline, so it was counted in no request metric and written to no log line. Found by a review.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startLoggedFixtureGateway } from '../helpers/gateway.js';
import { assertStateRefused, modernPost } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

describe('metrics: a refused 2026-07-28 requestState', () => {
  it('is counted as an error of its method (protocol_era="modern") and logged with its reason', async () => {
    const lines: string[] = [];
    const gw = await startLoggedFixtureGateway(lines);
    try {
      // A first call opens the standing; the forged retries after it are refused by their state.
      assert.equal((await modernPost(gw.url(), 'tools/list', {})).status, 200);
      for (let i = 0; i < 2; i++) assertStateRefused(await modernPost(gw.url(), 'tools/call', { name: 'test_simple_text', arguments: {}, inputResponses: {}, requestState: `forged-${i}` }), 'malformed');
      const text = await (await fetch(gw.app.metricsUrl!)).text();
      assert.match(text, /^switchboard_requests_total\{method="tools\/call",endpoint="\/mcp",upstream="none",outcome="error",protocol_era="modern"\} 2$/m, text);
      assert.match(text, /^switchboard_tool_calls_total\{tool="unknown",outcome="error"\} 2$/m, text);
      assert.doesNotMatch(text, /forged/);
      await until('the refusals were logged', () => lines.filter((l) => l.includes('"SWB_REQUEST_STATE_INVALID"') && l.includes('"malformed"')).length >= 2);
    } finally {
      await gw.close();
    }
  });
});
