// A 2026-07-28 retry is a POST of its own: it carries the same params as the request that got the
// input_required round, and so the same Mcp-Param-* headers, which the gateway (an intermediary that
// reads the body) must check against the body like the first POST's. A retry whose header disagrees
// with its arguments is refused 400 -32020 (HeaderMismatch), whether the round was the upstream's own
// question or a confirmation rule's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { FIXTURE } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';

const ASKING = { name: 'ra', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/regional-asking-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const, pool: { size: 1 } };
const CONFORMANCE = { name: 'fx', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const, pool: { size: 1 } };

describe('the Mcp-Param-* headers of a 2026-07-28 retry', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [ASKING, CONFORMANCE],
      endpoints: [{ path: '/mcp', upstreams: ['ra', 'fx'], prefix: 'always' }],
      tenants: [{ name: 'anonymous', endpoints: ['*'], confirm: [{ match: 'fx__test_x_mcp_header', message: 'Really?', timeoutMs: 10_000 }] }],
    });
  });
  after(() => gw.close());

  const post = (params: Record<string, unknown>, region?: string) => modernPost(gw.url(), 'tools/call', params, { headers: region === undefined ? {} : { 'mcp-param-region': region } });

  it("are checked against the body when the round was the upstream's question; a refused retry leaves its state for a good one", async () => {
    const call = { name: 'ra__regional_greeting', arguments: { region: 'eu' } };
    const round = inputRound(await post(call, 'eu'));
    const answers = { [round.key]: { action: 'accept', content: { name: 'Ada' } } };
    const lying = await post({ ...call, inputResponses: answers, requestState: round.state }, 'us');
    assert.equal(lying.status, 400, JSON.stringify(lying.body));
    assert.equal(lying.body.error?.code, -32020, JSON.stringify(lying.body));
    const missing = await post({ ...call, inputResponses: answers, requestState: round.state });
    assert.equal(missing.status, 400, JSON.stringify(missing.body));
    assert.equal(missing.body.error?.code, -32020, JSON.stringify(missing.body));
    const good = await post({ ...call, inputResponses: answers, requestState: round.state }, 'eu');
    assert.equal(good.status, 200, JSON.stringify(good.body));
    assert.equal(good.body.result?.content?.[0]?.text, 'Hello Ada in eu');
  });

  it("are checked against the body when the round was a confirmation rule's", async () => {
    const call = { name: 'fx__test_x_mcp_header', arguments: { region: 'eu' } };
    const round = inputRound(await post(call, 'eu'));
    const lying = await post({ ...call, inputResponses: { [round.key]: { action: 'accept', content: { confirm: true } } }, requestState: round.state }, 'us');
    assert.equal(lying.status, 400, JSON.stringify(lying.body));
    assert.equal(lying.body.error?.code, -32020, JSON.stringify(lying.body));
  });
});
