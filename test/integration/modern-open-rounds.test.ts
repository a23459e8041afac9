// 2026-07-28 rounds a client leaves unanswered (the era lets it: it need never retry) cannot pile up: a
// principal has at most modern.continuationsPerPrincipal rounds waiting for a retry on a replica. One
// more gives up its oldest, whose call the upstream is told is cancelled (and its question answered with
// an error); a retry of it is refused as gone. Another principal's rounds count apart. The 2025 stdio
// fixture journals what it receives; one process per principal (per-session: a standing's own).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { assertStateRefused, inputRound, Journal, modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';
import { ISSUER, PUBLIC_URL, signHmac } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const HMAC_SECRET = 'modern-open-rounds-test-hmac-secret-32+';
const ASKS_NAME = { name: 'test_input_required_result_elicitation', arguments: {} };
/** modern.continuationsPerPrincipal's default. */
const CAP = 16;

describe('2026-07-28: rounds waiting for a retry, per principal', () => {
  let gw: RunningGateway;
  const journal = new Journal();
  const tokens: Record<string, string> = {};

  before(async () => {
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], hmacSecret: HMAC_SECRET, allowHmac: true, algorithms: ['HS256'] },
      tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, args: [...FIXTURE.args, '--journal', journal.file], sharing: 'per-session', pool: { warm: 0, max: 4 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    tokens.alice = await signHmac(HMAC_SECRET, { sub: 'alice', tenant: 'acme', expIn: 3600 });
    tokens.bob = await signHmac(HMAC_SECRET, { sub: 'bob', tenant: 'acme', expIn: 3600 });
  });
  after(() => gw.close());

  /** A round of `who`'s, with the id its call reached the upstream under. */
  const begin = async (who: string) => {
    const mark = journal.mark();
    const round = inputRound(await modernPost(gw.url(), 'tools/call', ASKS_NAME, { token: tokens[who] }));
    const call = journal.since(mark).find((m) => m.method === 'tools/call');
    assert.ok(call, 'the call reached the upstream');
    return { ...round, upstreamId: call.id };
  };
  const retry = (who: string, round: { key: string; state: string }) =>
    modernPost(gw.url(), 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: { action: 'accept', content: { name: who } } }, requestState: round.state }, { token: tokens[who] });

  it('one round past the cap cancels the oldest upstream; the others, and another principal\'s, go on', async () => {
    const alice = [];
    for (let i = 0; i < CAP; i++) alice.push(await begin('alice'));
    const bob = await begin('bob');
    assert.equal(gw.app.gateway.modern.held, CAP + 1, 'bob\'s round counts apart: nothing given up');

    const mark = journal.mark();
    const newest = await begin('alice');
    // The oldest round's call is cancelled upstream, its question answered with an error.
    const cancelled = () => journal.since(mark).find((m) => m.method === 'notifications/cancelled');
    await until('notifications/cancelled for the oldest round', () => cancelled() !== undefined);
    assert.equal(cancelled().params.requestId, alice[0]!.upstreamId);
    await until('its question answered with an error', () => journal.since(mark).some((m) => m.error !== undefined));
    assert.equal(gw.app.gateway.modern.held, CAP + 1);
    const gone = await retry('alice', alice[0]!);
    assertStateRefused(gone, 'gone');

    for (const [who, round] of [['alice', alice[1]!], ['alice', newest], ['bob', bob]] as const) {
      const done = await retry(who, round);
      assert.equal(textOf(done.body.result), `Hello, ${who}!`, JSON.stringify(done.body));
    }
  });
});
