// A 2026-07-28 client in front of a per-session 2025 server that caches roots: the server asks roots/list
// when told notifications/initialized (a warm spare then has no client, and is refused) and at each
// notifications/roots/list_changed, never during a call. A 2025 session tells it list_changed once it is
// initialized; a 2026-07-28 standing told it nothing, so the server never had its client's roots. Now the
// first call that declares roots tells it list_changed, and its ask is that call's input round; roots the
// client gives later (another round) reach it too, as a list_changed answered with them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROOTS_CAPS as CAPS, resultText as text, SHOW_ROOTS, startCachingRootsGateway } from '../helpers/caching-roots.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { waitFor } from '../helpers/wait.js';

describe('a 2026-07-28 client and a per-session 2025 server that caches roots', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startCachingRootsGateway(1);
  });
  after(() => gw.close());

  it('the roots it supplies reach the server: in the first call that declares them, and later ones too', async () => {
    const show = SHOW_ROOTS;
    // A call that declares no roots is not asked for them (nor refused for them).
    const plain = await modernPost(gw.url(), 'tools/call', show, { caps: {} });
    assert.equal(text(plain.body), 'none');
    const round = inputRound(await modernPost(gw.url(), 'tools/call', show, { caps: CAPS }));
    assert.equal(round.method, 'roots/list');
    const first = await modernPost(gw.url(), 'tools/call', { ...show, inputResponses: { [round.key]: { roots: [{ uri: 'file:///a' }] } }, requestState: round.state }, { caps: CAPS });
    assert.equal(text(first.body), 'file:///a');
    // Cached by the server: no round.
    assert.equal(text((await modernPost(gw.url(), 'tools/call', show, { caps: CAPS })).body), 'file:///a');

    // Other roots, given in a round of a call that asks live: the server's cache follows.
    const ask = { name: 'ask_roots', arguments: {} };
    const live = inputRound(await modernPost(gw.url(), 'tools/call', ask, { caps: CAPS }));
    const answered = await modernPost(gw.url(), 'tools/call', { ...ask, inputResponses: { [live.key]: { roots: [{ uri: 'file:///b' }] } }, requestState: live.state }, { caps: CAPS });
    assert.equal(text(answered.body), 'file:///b');
    // The server asks again once told list_changed, after the call: its cache changes a little later.
    const seen = await waitFor(async () => {
      const now = text((await modernPost(gw.url(), 'tools/call', show, { caps: CAPS })).body);
      return now === 'file:///b' ? now : undefined;
    });
    assert.equal(seen, 'file:///b');
  });
});
