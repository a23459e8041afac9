// Token exchange with two sessions of one user: each session's calls are exchanged from the token that
// session presented, never from one another session of the same user presented (before, the user's latest
// token, whichever session brought it, was the subject_token of every exchange, and one cached exchanged
// token served all their sessions: a session opened with a narrow token could call with a broader grant).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startExchangeRig, type ExchangeRig } from '../helpers/exchange-rig.js';
import { connectWithToken, signToken, type TokenClient } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const NARROW = 'tickets:read';
const BROAD = 'tickets:read tickets:write';

describe('token exchange: each session of a user is served with its own token', () => {
  let rig: ExchangeRig;
  const clients: TokenClient[] = [];

  // Swept every 500 ms: a closed session's instance goes at the next sweep.
  before(async () => {
    rig = await startExchangeRig({ upstream: { pool: { userIdleMs: 2000 } } });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await rig?.close();
  });

  const connect = async (scope: string) => {
    const c = await connectWithToken(rig.gw, 'streamable-http', await signToken(rig.key, { sub: 'alice', scope, expIn: 600 }), { name: scope });
    clients.push(c);
    return c;
  };

  const whoamiAs = async (c: TokenClient, label: string): Promise<unknown> => {
    const r = await c.client.callTool({ name: 'whoami', arguments: { claimed: 'alice' } });
    assert.equal((r.content as Array<{ text: string }>)[0]!.text, 'alice', label);
    return rig.upstream.seen.at(-1)!.subjectScope;
  };

  it('a narrow session and a broad one of the same user: each call is exchanged from its own session\'s token', async () => {
    const narrow = await connect(NARROW);
    assert.equal(await whoamiAs(narrow, 'narrow first'), NARROW);
    const broad = await connect(BROAD);
    // Before: the broad session's calls went with the token exchanged for the narrow one (cached per user).
    assert.equal(await whoamiAs(broad, 'broad'), BROAD, "the broad session's call was made with the narrow session's token");
    // And the narrow session never gets the broad grant, whichever session spoke last.
    assert.equal(await whoamiAs(narrow, 'narrow again'), NARROW, "the narrow session's call was made with the broad session's token");
    assert.equal(await whoamiAs(broad, 'broad again'), BROAD);
    assert.equal(rig.upstream.crossed, 0);
    assert.deepEqual(rig.upstream.rejected, []);
    // Each session its own upstream session; the closed one's ends (its instance stopped by the sweep) while
    // the other, busy, keeps its own and its grant.
    assert.equal(rig.upstream.open(), 2);
    await narrow.close();
    let busy = true;
    const calls = (async () => {
      while (busy) assert.equal(await whoamiAs(broad, 'broad while the narrow one ends'), BROAD);
    })();
    await until('the closed session\'s upstream session ended', () => rig.upstream.open() === 1).finally(() => (busy = false));
    await calls;
  });
});
