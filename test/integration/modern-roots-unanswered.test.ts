// A 2026-07-28 standing in front of a per-session 2025 server that caches roots tells it
// notifications/roots/list_changed when its first call declaring roots runs, and the server's ask is that
// call's input round. When that call ended with the question unanswered (its client never retried, or
// closed the request), the server had no roots, and no later call declaring roots told it list_changed
// again: it answered from an empty cache for as long as the standing lasted. Now, until the client has given
// roots, the next call declaring them prompts the server again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROOTS_CAPS as CAPS, resultText as text, SHOW_ROOTS as SHOW, startCachingRootsGateway } from '../helpers/caching-roots.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';

describe('a 2026-07-28 client whose first roots round went unanswered, and a server that caches roots', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startCachingRootsGateway(1, { modern: { continuationTtlMs: 1000 } });
  });
  after(() => gw.close());

  it('a later call declaring roots prompts the server again, and the roots it gives reach it', { timeout: 60_000 }, async () => {
    // The first call's round is never answered: the call ends when its state expires, its question refused.
    inputRound(await modernPost(gw.url(), 'tools/call', SHOW, { caps: CAPS }));
    // Answered once the server's ask was refused (show_roots waits for it): it has no roots.
    assert.equal(text((await modernPost(gw.url(), 'tools/call', SHOW, { caps: {} })).body), 'none');
    const round = inputRound(await modernPost(gw.url(), 'tools/call', SHOW, { caps: CAPS }));
    assert.equal(round.method, 'roots/list');
    const answered = await modernPost(gw.url(), 'tools/call', { ...SHOW, inputResponses: { [round.key]: { roots: [{ uri: 'file:///a' }] } }, requestState: round.state }, { caps: CAPS });
    assert.equal(text(answered.body), 'file:///a');
  });
});
