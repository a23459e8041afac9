// Token exchange within one session whose client changes its token: a 2025 session's requests may come with
// different tokens of its subject (a narrower one handed down mid-session), and its calls are exchanged from
// the token the session presented last. The exchanged token was cached until its renewal, whatever token the
// session sent meanwhile: a client that narrowed its token kept calling with the broader token's grant.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startExchangeRig, type ExchangeRig } from '../helpers/exchange-rig.js';
import { connectWithToken, signToken, type TokenClient } from '../helpers/tokens.js';

const NARROW = 'tickets:read';
const BROAD = 'tickets:read tickets:write';

describe('token exchange: a session whose client narrows its token mid-session', () => {
  let rig: ExchangeRig;
  let client: TokenClient | undefined;

  before(async () => {
    rig = await startExchangeRig();
  });

  after(async () => {
    await client?.close().catch(() => {});
    await rig?.close();
  });

  const whoami = async (c: TokenClient): Promise<unknown> => {
    const r = await c.client.callTool({ name: 'whoami', arguments: { claimed: 'alice' } });
    assert.equal((r.content as Array<{ text: string }>)[0]!.text, 'alice');
    return rig.upstream.seen.at(-1)!.subjectScope;
  };

  it("is served with an exchange of the narrower token from its next call, never the broader one's cached grant", async () => {
    client = await connectWithToken(rig.gw, 'streamable-http', await signToken(rig.key, { sub: 'alice', scope: BROAD, expIn: 600 }));
    assert.equal(await whoami(client), BROAD);
    assert.equal(await whoami(client), BROAD);
    assert.equal(rig.as.exchanges.get('alice'), 1, 'the exchanged token is cached while the token the session presents is the same');
    client.setToken(await signToken(rig.key, { sub: 'alice', scope: NARROW, expIn: 600 }));
    assert.equal(await whoami(client), NARROW, "the call after the client narrowed its token went with the broader token's exchange");
    assert.equal(await whoami(client), NARROW);
    assert.equal(rig.as.exchanges.get('alice'), 2);
    assert.equal(rig.upstream.crossed, 0);
  });
});
