// A 2026-07-28 standing's per-session 2025 server that caches roots, started for it (no warm spare): the
// server asks roots/list when told notifications/initialized, and again when the standing's first call
// declaring roots tells it list_changed; both asks came during that call, and its input round put the same
// question to the client twice (roots-1, roots-2). Now asks for roots that come while one is put to the
// client share its answer: the round asks once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROOTS_CAPS as CAPS, resultText as text, SHOW_ROOTS as SHOW, startCachingRootsGateway } from '../helpers/caching-roots.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';

describe('a per-session server that caches roots, started for a 2026-07-28 standing', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startCachingRootsGateway(0);
  });
  after(() => gw.close());

  it('its first call declaring roots asks the client for them once, and the answer reaches the server', { timeout: 60_000 }, async () => {
    const round = inputRound(await modernPost(gw.url(), 'tools/call', SHOW, { caps: CAPS }));
    assert.equal(round.method, 'roots/list');
    const answered = await modernPost(gw.url(), 'tools/call', { ...SHOW, inputResponses: { [round.key]: { roots: [{ uri: 'file:///a' }] } }, requestState: round.state }, { caps: CAPS });
    assert.equal(text(answered.body), 'file:///a');
  });
});
