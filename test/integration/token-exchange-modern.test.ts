// Token exchange for 2026-07-28 (stateless) requests: each request's upstream call is exchanged from that
// request's own token. Before, all modern requests of one subject on one endpoint shared one standing,
// whose instance kept the token exchanged for whichever token came first (or whose guard followed the
// latest one): a request made with a narrow token could be served with another client's broader grant.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startExchangeRig, type ExchangeRig } from '../helpers/exchange-rig.js';
import { modernPost } from '../helpers/modern-http.js';
import { signToken } from '../helpers/tokens.js';

const NARROW = 'tickets:read';
const BROAD = 'tickets:read tickets:write';

describe('token exchange: each modern request is served with its own token', () => {
  let rig: ExchangeRig;
  before(async () => {
    rig = await startExchangeRig();
  });
  after(() => rig?.close());

  const whoamiWith = async (token: string, label: string): Promise<unknown> => {
    const a = await modernPost(rig.gw.url(), 'tools/call', { name: 'whoami', arguments: { claimed: 'alice' } }, { token });
    assert.equal(a.status, 200, `${label}: ${JSON.stringify(a.body)}`);
    assert.equal(a.body.result?.content?.[0]?.text, 'alice', `${label}: ${JSON.stringify(a.body)}`);
    return rig.upstream.seen.at(-1)!.subjectScope;
  };

  it('narrow and broad tokens of the same subject: each request reaches the upstream with the exchange of its own token', async () => {
    const narrow = await signToken(rig.key, { sub: 'alice', scope: NARROW, expIn: 600 });
    const broad = await signToken(rig.key, { sub: 'alice', scope: BROAD, expIn: 600 });
    assert.equal(await whoamiWith(narrow, 'narrow first'), NARROW);
    // Before: the broad request was served with the narrow token's exchange (one standing, one instance).
    assert.equal(await whoamiWith(broad, 'broad'), BROAD, "the broad request was served with the narrow token's exchange");
    // And a narrow request after the broad one never gets the broad grant.
    assert.equal(await whoamiWith(narrow, 'narrow again'), NARROW, "the narrow request was served with the broad token's exchange");
    // At once, too: one call with each grant, none with the other's.
    const before = rig.upstream.seen.length;
    await Promise.all([whoamiWith(broad, 'broad, concurrent'), whoamiWith(narrow, 'narrow, concurrent')]);
    assert.deepEqual(rig.upstream.seen.slice(before).map((s) => s.subjectScope).sort(), [BROAD, NARROW].sort());
    assert.equal(rig.upstream.crossed, 0);
    assert.deepEqual(rig.upstream.rejected, []);
  });
});
