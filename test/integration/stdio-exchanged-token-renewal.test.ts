// A stdio upstream started with an exchange of its session's user's token (tokenEnv, token-exchange,
// sharing: per-session) kept the token it was started with for the life of the session. Remote upstreams
// renew an exchanged token before it expires and exchange the session's latest token once its client sends
// another (token-exchange-narrower-token.test.ts); the process did neither, so a session's calls ran with an
// expired token once its life was over, and with a broader token's grant after its client narrowed its token.
// Now each request first checks the token the process holds against the one the exchange gives now: another
// (renewed, or exchanged from the session's latest token) restarts the process with it, and the request goes
// to the new process. Never another user's: the process is its session's (the per-session pool, no spares).
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { startStdioExchangeRig } from '../helpers/exchange-rig.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { connectWithToken, signToken, type TestKey, type TokenClient } from '../helpers/tokens.js';

const HOSTILE = resolve('test/fixtures/hostile-server.mjs');
const BROAD = 'tickets:read tickets:write';
const NARROW = 'tickets:read';

describe('a stdio upstream holding an exchanged token (tokenEnv) across its session', () => {
  let key: TestKey;
  let gw: RunningGateway;
  let close: (() => Promise<void>) | undefined;
  const clients: TokenClient[] = [];

  before(async () => {
    // 30 s, the shortest life the gateway takes a token for: renewed half-way through.
    ({ key, gw, close } = await startStdioExchangeRig(HOSTILE, 30));
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await close?.();
  });

  const connect = async (scope: string) => {
    const c = await connectWithToken(gw, 'streamable-http', await signToken(key, { sub: 'alice', scope, expIn: 600 }), { path: '/tickets' });
    clients.push(c);
    return c;
  };
  /** The token the session's process holds now, and the process's id. */
  const held = async (c: TokenClient) => {
    const env = JSON.parse((await c.client.callTool({ name: 'environment', arguments: {} }) as { content: Array<{ text: string }> }).content[0]!.text) as Record<string, string>;
    const who = JSON.parse((await c.client.callTool({ name: 'whoami', arguments: {} }) as { content: Array<{ text: string }> }).content[0]!.text) as { pid: number };
    const token = env.TICKETS_TOKEN!;
    return { token, claims: decodeJwt(token), pid: who.pid };
  };

  it("a client that narrows its token mid-session: the next call runs in a process holding the narrower token's exchange", async () => {
    const c = await connect(BROAD);
    const first = await held(c);
    assert.equal(first.claims.sub, 'alice');
    assert.equal(first.claims.subject_scope, BROAD);
    c.setToken(await signToken(key, { sub: 'alice', scope: NARROW, expIn: 600 }));
    const after = await held(c);
    assert.equal(after.claims.sub, 'alice');
    assert.equal(after.claims.subject_scope, NARROW, "the process still held the broader token's exchange");
    assert.notEqual(after.pid, first.pid, 'a new process, started with the new token');
  });

  it('no call runs in a process whose token has expired: the process is restarted with a renewed one', async () => {
    const c = await connect(BROAD);
    const first = await held(c);
    const expiry = (first.claims.exp as number) * 1000;
    let last = first;
    while (Date.now() < expiry + 1000) {
      const asked = Date.now();
      last = await held(c);
      assert.ok((last.claims.exp as number) * 1000 > asked, `a call ran with a token that expired ${asked - (last.claims.exp as number) * 1000} ms before`);
      assert.equal(last.claims.sub, 'alice');
      await new Promise((r) => setTimeout(r, 1000));
    }
    assert.notEqual(last.token, first.token);
  });
});
