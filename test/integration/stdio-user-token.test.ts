// A stdio upstream started with its session's user's own token in an environment variable (sharing:
// per-session, auth token-exchange or user-oauth, tokenEnv): the process is the malicious fixture, whose
// `environment` tool shows what it was given. Each user's process holds a token the authorization server
// issued for that user (its signature checked here against the server's keys), never another user's,
// never the client's own token, never the gateway's environment. One of the two runs in the strict
// bubblewrap sandbox. Without consent, the call asks for it (-32042) and no process is started.
import assert from 'node:assert/strict';
import { dirname, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { consent, consentUrlOf, urlClient } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startExchangeServer, type ExchangeServer } from '../helpers/exchange-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const HOSTILE = resolve('test/fixtures/hostile-server.mjs');
const CLIENT_ID = 'switchboard';
const CLIENT_SECRET = 'exchange-client-secret-never-shown';
const TICKETS = 'https://tickets.test';
const NOTES = 'https://notes.test';
const VAULT_KEY = Buffer.alloc(32, 9).toString('base64');
const GATEWAY_SECRET = `swb-gateway-env-secret-${process.pid}`;
/** A Node.js that CI installed for one line (.cache/node24) lies outside the trees the sandbox shows. */
const NODE_DIR = dirname(process.execPath);
const NODE_MOUNT = ['/usr/', '/bin/'].some((tree) => NODE_DIR.startsWith(tree)) ? [] : [NODE_DIR];

type Env = Record<string, string>;

describe("stdio upstreams started with their session's user's token (tokenEnv, sharing: per-session)", () => {
  let key: TestKey;
  let jwks: JwksServer;
  let ex: ExchangeServer;
  let cs: ConsentServer;
  let gw: RunningGateway;
  const logLines: string[] = [];
  const tokens: Record<string, string> = {};
  const clients: Client[] = [];
  /** Every token a process was given (for the log scan). */
  const given = new Set<string>();

  before(async () => {
    process.env.SWB_STDIO_TOKEN_TEST_SECRET = GATEWAY_SECRET;
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    ex = await startExchangeServer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, subjectIssuer: ISSUER, subjectKeys: [key.publicJwk], subjectAudience: PUBLIC_URL });
    cs = await startConsentServer({ audience: NOTES });
    for (const sub of ['alice', 'bob']) tokens[sub] = await signToken(key, { sub, expIn: 600 });
    const stdio = { transport: 'stdio' as const, command: process.execPath, args: [HOSTILE], sharing: 'per-session' as const, env: { GREETING: 'declared' }, healthCheck: { intervalMs: 0 } };
    gw = await startGateway(
      {
        server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
        tenants: [{ name: 'acme', endpoints: ['*'] }],
        vault: { key: VAULT_KEY },
        upstreams: [
          {
            ...stdio,
            name: 'tickets',
            // The strict profile: the variable passes bubblewrap and prlimit like any declared one.
            sandbox: { readOnly: [dirname(HOSTILE), ...NODE_MOUNT] },
            tokenEnv: 'TICKETS_TOKEN',
            auth: { type: 'token-exchange', tokenEndpoint: ex.tokenEndpoint, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, audience: TICKETS },
          },
          {
            ...stdio,
            name: 'notes',
            sandbox: 'none',
            tokenEnv: 'NOTES_TOKEN',
            auth: { type: 'user-oauth', clientId: CLIENT_ID, authorizationEndpoint: cs.authorizationEndpoint, tokenEndpoint: cs.tokenEndpoint, resource: NOTES },
          },
        ],
        endpoints: [
          { path: '/tickets', upstreams: ['tickets'] },
          { path: '/notes', upstreams: ['notes'] },
        ],
      },
      { logLines },
    );
  });

  after(async () => {
    delete process.env.SWB_STDIO_TOKEN_TEST_SECRET;
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gw?.close();
    await cs?.close();
    await ex?.close();
    await jwks?.close();
  });

  const connect = async (sub: string, path: string) => {
    const c = await urlClient(gw.base, tokens[sub]!, sub, path);
    clients.push(c);
    return c;
  };
  const environment = async (c: Client): Promise<Env> => {
    const r = await c.callTool({ name: 'environment', arguments: {} });
    const env = JSON.parse((r.content as Array<{ text: string }>)[0]!.text) as Env;
    for (const k of ['TICKETS_TOKEN', 'NOTES_TOKEN']) if (env[k]) given.add(env[k]);
    return env;
  };
  const retried = async <T>(f: () => Promise<T>): Promise<T> => {
    for (let i = 0; ; i++) {
      try {
        return await f();
      } catch (err) {
        if (i >= 50) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  /** The token's claims, once its signature, issuer and audience check out against the server that issued it. */
  const verified = async (token: string | undefined, issuer: string, keys: ReturnType<ExchangeServer['keys']>, audience: string) => {
    assert.ok(token, 'the process was given a token');
    return (await jwtVerify(token, createLocalJWKSet({ keys }), { issuer, audience })).payload;
  };
  /** Only the basics (bubblewrap adds PWD), what was declared and the token: nothing of the gateway's, nothing of the client's. */
  const assertConfined = (env: Env, variable: string) => {
    assert.deepEqual(Object.keys(env).filter((k) => !['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'PWD', 'GREETING', variable].includes(k)), []);
    assert.equal(env.GREETING, 'declared');
    const all = JSON.stringify(env);
    assert.ok(!all.includes(GATEWAY_SECRET), "the gateway's environment stays out");
    for (const t of Object.values(tokens)) assert.ok(!all.includes(t), "a client's own token never reaches the process");
  };

  it('token exchange: each session\'s process holds a token issued for its own user (audience the upstream, actor the gateway), in the sandbox', async () => {
    const sessions = [
      ['alice', await connect('alice', '/tickets')],
      ['bob', await connect('bob', '/tickets')],
      ['alice', await connect('alice', '/tickets')],
    ] as const;
    const envs = await Promise.all(sessions.map(([, c]) => environment(c)));
    for (const [i, [sub]] of sessions.entries()) {
      const claims = await verified(envs[i]!.TICKETS_TOKEN, ex.issuer, ex.keys(), TICKETS);
      assert.equal(claims.sub, sub);
      assert.equal((claims.act as { sub?: string } | undefined)?.sub, CLIENT_ID);
      assertConfined(envs[i]!, 'TICKETS_TOKEN');
    }
    // Interleaved calls: each process goes on answering with its own user's token.
    const again = await Promise.all(Array.from({ length: 30 }, (_, i) => environment(sessions[i % 3]![1])));
    again.forEach((env, i) => assert.equal(env.TICKETS_TOKEN, envs[i % 3]!.TICKETS_TOKEN));
  });

  it('user consent: no process before consent (-32042 with the link); after it the retry starts one with the user\'s own token', async () => {
    const a = await connect('alice', '/notes');
    const pool = gw.app.gateway.pools.get('notes')!;
    const asked = await a.callTool({ name: 'environment', arguments: {} }).then(
      (r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`),
      (e: unknown) => consentUrlOf(e),
    );
    assert.ok(asked.startsWith(`${PUBLIC_URL}/oauth/start?flow=`), asked);
    assert.ok([...pool.instances].every((i) => i.pid === undefined), 'no process runs without the token');
    cs.loginAs = 'alice';
    assert.equal((await consent(gw.base, asked)).status, 200);
    const env = await environment(a);
    assert.equal((await verified(env.NOTES_TOKEN, cs.issuer, cs.keys(), NOTES)).sub, 'alice');
    assertConfined(env, 'NOTES_TOKEN');

    // Bob's session: his own consent, his own token; Alice's process keeps hers.
    const b = await connect('bob', '/notes');
    cs.loginAs = 'bob';
    const bobs = await b.callTool({ name: 'environment', arguments: {} }).then(
      () => assert.fail('bob has not consented'),
      (e: unknown) => consentUrlOf(e),
    );
    assert.equal((await consent(gw.base, bobs)).status, 200);
    assert.equal((await verified((await environment(b)).NOTES_TOKEN, cs.issuer, cs.keys(), NOTES)).sub, 'bob');
    assert.equal((await environment(a)).NOTES_TOKEN, env.NOTES_TOKEN);
    // A new session of a user who consented starts with the stored token at once.
    const a2 = await connect('alice', '/notes');
    assert.equal((await verified((await environment(a2)).NOTES_TOKEN, cs.issuer, cs.keys(), NOTES)).sub, 'alice');
  });

  it("revocation stops the user's running processes: the next call asks for consent, never runs on the revoked token", async () => {
    // Alice consented in the test above: two sessions of hers run processes holding her token.
    const [a, a2] = [await connect('alice', '/notes'), await connect('alice', '/notes')];
    const pid = async (c: Client) => (JSON.parse((await c.callTool({ name: 'whoami', arguments: {} }) as { content: Array<{ text: string }> }).content[0]!.text) as { pid: number }).pid;
    assert.equal((await environment(a2)).NOTES_TOKEN, (await environment(a)).NOTES_TOKEN);
    const before = await pid(a);
    const del = await fetch(`${gw.base}/oauth/links/notes`, { method: 'DELETE', headers: { authorization: `Bearer ${tokens.alice}` } });
    assert.equal(del.status, 204);
    const asked = async (c: Client) =>
      c.callTool({ name: 'environment', arguments: {} }).then(
        (r) => assert.fail(`the revoked link still served a call: ${JSON.stringify(r).slice(0, 80)}`),
        (e: unknown) => consentUrlOf(e),
      );
    const url = await asked(a);
    await asked(a2);
    // Relinked, possibly to another account: the process restarts with the new token, not the revoked one.
    cs.loginAs = 'alice';
    assert.equal((await consent(gw.base, url)).status, 200);
    // Its process was stopped on the revocation; the restart after consent may still be under way.
    const env = await retried(() => environment(a));
    assert.notEqual(await pid(a), before, 'a new process, started with the new consent');
    assert.equal((await verified(env.NOTES_TOKEN, cs.issuer, cs.keys(), NOTES)).sub, 'alice');
  });

  it('no token or client secret appears in a log line', () => {
    const all = logLines.join('\n');
    assert.ok(logLines.some((l) => l.includes('starting upstream process')), 'control: the processes were logged');
    assert.ok(given.size >= 4, 'control: the processes were given tokens');
    for (const t of [...Object.values(tokens), ...given, ...cs.issued, CLIENT_SECRET, GATEWAY_SECRET]) assert.ok(!all.includes(t), 'a secret was logged');
  });
});
