// The vault in Redis: two replicas share it (a consent started on one completes on the other, and either
// calls the upstream as the user), tokens survive a Redis restart, an operator revokes a link through the
// admin API or the CLI, keys rotate (a previous key opens and the entry is sealed again; a dropped key
// opens nothing), and no token or key is ever in a log line, /metrics or an admin API answer.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Redis } from 'ioredis';
import { linksCommand } from '../../src/links-command.js';
import { userKey } from '../../src/upstream/upstream-user.js';
import { authorize, consentUrlOf, hop, openLink, urlClient } from '../helpers/consent-browser.js';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startIdentityUpstream, type IdentityUpstream } from '../helpers/identity-upstream.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const AUDIENCE = 'https://tickets.test';
const ADMIN_TOKEN = 'admin-token-for-vault-tests-0123456789abcdef';
const KEY1 = Buffer.alloc(32, 1).toString('base64');
const KEY2 = Buffer.alloc(32, 2).toString('base64');
const KEY3 = Buffer.alloc(32, 3).toString('hex');

describe('user consent with the vault in Redis: replicas, restarts, operators, key rotation', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let as: ConsentServer;
  let upstream: IdentityUpstream;
  let redis: TestRedis;
  let raw: Redis;
  const gateways: RunningGateway[] = [];
  const clients: Client[] = [];
  const logLines: string[] = [];
  const adminAnswers: string[] = [];
  const tokens: Record<string, string> = {};
  let dir: string;

  const start = (vault: { key: string; previousKeys?: string[] }, admin = false) =>
    startGateway(
      {
        server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
        tenants: [{ name: 'acme', endpoints: ['*'] }],
        store: { redis: { url: redis.url, keyPrefix: 'vt:' } },
        vault,
        ...(admin ? { admin: { enabled: true, port: 0, token: ADMIN_TOKEN } } : {}),
        upstreams: [{ name: 'tickets', transport: 'streamable-http', url: upstream.url, sharing: 'per-user', auth: { type: 'user-oauth', clientId: 'switchboard', authorizationServer: as.issuer } }],
        endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
      },
      { logLines },
    ).then((g) => (gateways.push(g), g));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-vault-'));
    key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    as = await startConsentServer({ audience: AUDIENCE });
    upstream = await startIdentityUpstream({ issuer: as.issuer, audience: AUDIENCE, keys: as.keys });
    redis = await startRedis({ persist: true });
    raw = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    raw.on('error', () => {}); // down while Redis restarts
    // This hour's dead-link sweep claimed, as by a replica before: a gateway's sweep at start (retried a second
    // later, then at doubling waits, while its connection is not up) HSCANs the links hash, and on a loaded machine
    // it fell inside the window the listing test watches. The sweep test below takes the claim back.
    await raw.set('vt:vault:swept', '1', 'PX', 3_600_000);
    for (const sub of ['alice', 'bob']) tokens[sub] = await signToken(key, { sub, expIn: 600 });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    for (const g of gateways) await g.close().catch(() => {});
    raw?.disconnect();
    await redis?.stop();
    await upstream?.close();
    await as?.close();
    await jwks?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const client = async (gw: RunningGateway, sub: string) => {
    const c = await urlClient(gw.base, tokens[sub]!, sub);
    clients.push(c);
    return c;
  };
  const whoami = (c: Client, sub: string) => c.callTool({ name: 'whoami', arguments: { claimed: sub } });
  const text = (r: Awaited<ReturnType<Client['callTool']>>) => (r.content as Array<{ text: string }>)[0]!.text;
  const consentUrl = (c: Client, sub: string) => whoami(c, sub).then((r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`), consentUrlOf);
  const admin = async (gw: RunningGateway, method: string, path: string) => {
    const res = await fetch(new URL(path, gw.app.adminUrl), { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const body = await res.text();
    adminAnswers.push(body);
    return { status: res.status, body: JSON.parse(body) as Record<string, any> };
  };
  const sealedKeyId = async (sub: string) => {
    const all = await raw.hgetall('vt:vault:links');
    const entry = Object.values(all).map((v) => JSON.parse(v)).find((e) => e.user.subject === sub);
    return entry?.sealed.split('.')[1] as string | undefined;
  };

  it('two replicas share the vault: consent asked on A, started on B, completed on A; both call as the user', async () => {
    const [a, b] = [await start({ key: KEY1 }, true), await start({ key: KEY1 })];
    const ca = await client(a, 'alice');
    const url = await consentUrl(ca, 'alice');
    as.loginAs = 'alice';
    const flow = await authorize(b.base, url);
    // The callback URL names the public URL; the test sends it to replica A instead of B.
    const done = await hop(a.base + new URL(flow.callback).pathname + new URL(flow.callback).search, flow.cookie);
    assert.equal(done.status, 200, done.text);
    assert.equal(text(await whoami(ca, 'alice')), 'alice');
    assert.equal(text(await whoami(await client(b, 'alice'), 'alice')), 'alice');
    assert.equal(upstream.crossed, 0);
    const stored = JSON.stringify(await raw.hgetall('vt:vault:links'));
    for (const t of as.issued) assert.ok(!stored.includes(t), 'a token in Redis in the clear');
  });

  it('tokens survive a Redis restart', async () => {
    await redis.restart();
    const a = gateways[0]!;
    await until('the vault is readable again', async () => {
      try {
        return text(await whoami(await client(a, 'alice'), 'alice')) === 'alice';
      } catch {
        return false;
      }
    }, 20_000);
    assert.equal(as.codes.get('alice'), 1, 'no second consent');
  });

  it('an operator lists links (metadata only) and revokes one through the admin API; the user is asked again', async () => {
    const a = gateways[0]!;
    const ca = await client(a, 'bob');
    as.loginAs = 'bob';
    const f = await authorize(a.base, await consentUrl(ca, 'bob'));
    assert.equal((await hop(f.callback, f.cookie)).status, 200);
    const listed = await admin(a, 'GET', '/links');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.items.map((l: { subject: string }) => l.subject).sort(), ['alice', 'bob']);
    assert.deepEqual(Object.keys(listed.body.items[0]).sort(), ['expiresAt', 'issuer', 'linkedAt', 'refreshable', 'state', 'subject', 'tenant', 'upstream']);
    assert.equal((await admin(a, 'DELETE', '/links/tickets')).status, 400, 'the user must be named');
    // A narrowing filter given twice is refused (2026-12-06): read as absent, it revoked bob's links in every tenant.
    assert.equal((await admin(a, 'DELETE', '/links/tickets?subject=bob&tenant=other&tenant=elsewhere')).status, 400);
    assert.equal((await admin(a, 'GET', '/links?subject=bob&subject=alice')).status, 400);
    const revoked = await admin(a, 'DELETE', '/links/tickets?subject=bob');
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.items.length, 1);
    assert.equal((await admin(a, 'DELETE', '/links/tickets?subject=bob')).status, 404);
    await consentUrl(ca, 'bob');
    assert.equal(text(await whoami(await client(a, 'alice'), 'alice')), 'alice', 'alice is untouched');
  });

  // GET /oauth/links used to read the whole vault (every user's sealed records, HGETALL) to answer one
  // user. Redis's MONITOR shows what the answer read: only the caller's own records.
  it("GET /oauth/links reads only the caller's own records, and lists only them", async (t) => {
    const a = gateways[0]!;
    const vault = a.app.gateway.consent!.vault;
    const others = ['bob', 'carol'].map((subject) => ({ issuer: ISSUER, subject, tenant: 'acme' }));
    for (const u of others) await vault.save('tickets', u, { accessToken: `at-${u.subject}`, expiresAt: Date.now() + 60_000 });
    // The next tests expect alice's link alone.
    t.after(() => Promise.all(others.map((u) => vault.revoke('tickets', u))));
    const list = async () => {
      const res = await fetch(`${a.base}/oauth/links`, { headers: { authorization: `Bearer ${tokens.alice}` } });
      assert.equal(res.status, 200);
      return ((await res.json()) as { links: Array<{ subject: string; upstream: string }> }).links;
    };
    // The first listing may index links stored before the index existed (once): the second is the one watched.
    await list();
    const monitor = await raw.monitor();
    const seen: string[][] = [];
    const marker = `end-of-listing-${Date.now()}`;
    const ended = new Promise<void>((resolve) =>
      monitor.on('monitor', (_time: string, args: string[]) => {
        if (args.includes(marker)) resolve();
        else if (args.some((x) => x.startsWith('vt:vault:'))) seen.push(args);
      }),
    );
    try {
      assert.deepEqual((await list()).map((l) => [l.subject, l.upstream]), [['alice', 'tickets']]);
      await raw.echo(marker);
      await ended;
    } finally {
      monitor.disconnect();
    }
    assert.ok(seen.length > 0, 'the listing read the vault');
    const wholeHash = seen.filter((args) => /^(hgetall|hvals|hkeys|hscan|hlen)$/i.test(args[0]!));
    assert.deepEqual(wholeHash, [], 'no read of the whole vault');
    const others_ = seen.filter((args) => args.some((x) => others.some((u) => x.includes(JSON.stringify(u.subject)))));
    assert.deepEqual(others_, [], "no read of another user's records");
  });

  // A replica of the earlier release, still running in a rolling upgrade, wrote links with HSET alone (no
  // SADD to the user's index): the user's GET /oauth/links never listed theirs. Its field is known from the
  // configured upstream's name, so the listing reads it, and puts it back in the index.
  it("GET /oauth/links lists a link an earlier release's replica wrote to the hash alone, and repairs the index", async () => {
    const a = gateways[0]!;
    const index = `vt:vault:user:${userKey({ issuer: ISSUER, subject: 'alice', tenant: 'acme' })}`;
    assert.equal(await raw.srem(index, 'tickets'), 1, "alice's link as that replica leaves it: in the hash, not in her index");
    const res = await fetch(`${a.base}/oauth/links`, { headers: { authorization: `Bearer ${tokens.alice}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(((await res.json()) as { links: Array<{ upstream: string }> }).links.map((l) => l.upstream), ['tickets']);
    assert.deepEqual(await raw.smembers(index), ['tickets']);
  });

  // A link with no refresh token whose access token expired is dead (its next use asks for consent again),
  // but one its user never used again was kept forever and listed as any other: it shows as expired, and a
  // replica's sweep (at its start, then hourly: one replica for all) deletes it 30 days after it expired.
  it('a dead link is listed as expired, and deleted by the sweep 30 days after it expired', async () => {
    const a = gateways[0]!;
    const vault = a.app.gateway.consent!.vault;
    const [carol, dave] = ['carol', 'dave'].map((subject) => ({ issuer: ISSUER, subject, tenant: 'acme' }));
    await vault.save('tickets', carol!, { accessToken: 'at-carol', expiresAt: Date.now() - 31 * 86_400_000 });
    await vault.save('tickets', dave!, { accessToken: 'at-dave', expiresAt: Date.now() - 86_400_000 });
    const states = async () => Object.fromEntries((await admin(a, 'GET', '/links')).body.items.map((l: { subject: string; state: string }) => [l.subject, l.state]));
    assert.deepEqual(await states(), { alice: 'active', carol: 'expired', dave: 'expired' });
    await raw.del('vt:vault:swept'); // swept this hour already, when the first replica started
    await start({ key: KEY1 });
    await until('the sweep deleted the link that expired 31 days ago', async () => (await raw.hexists('vt:vault:links', `tickets\n${userKey(carol!)}`)) === 0, 5_000);
    assert.deepEqual(await states(), { alice: 'active', dave: 'expired' });
    await vault.revoke('tickets', dave!);
  });

  it('the CLI lists and revokes links in Redis', async () => {
    const file = join(dir, 'gw.yaml');
    writeFileSync(file, `store:\n  redis:\n    url: ${redis.url}\n    keyPrefix: "vt:"\nupstreams:\n  - name: tickets\n    transport: streamable-http\n    url: ${upstream.url}\nendpoints:\n  - path: /mcp\n    upstreams: [tickets]\nauth:\n  mode: none\nserver:\n  host: 127.0.0.1\n`);
    const out: string[] = [];
    const err: string[] = [];
    const io = (a: string[]) => ({ write: (s: string) => a.push(s) });
    const input = { config: file, subject: 'alice', upstream: 'tickets', tenant: undefined, issuer: undefined, json: false };
    assert.equal(await linksCommand({ ...input, action: 'list', subject: undefined, upstream: undefined }, '', io(out), io(err)), 0, err.join(''));
    assert.match(out.join(''), /^tickets\talice\tacme\t/m);
    // The command itself, as an operator runs it.
    const cli = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', '..', 'src', 'main.ts'), 'links', 'list', '--config', file, '--upstream', 'tickets', '--json'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(cli.status, 0, cli.stderr);
    assert.deepEqual((JSON.parse(cli.stdout) as Array<{ subject: string }>).map((l) => l.subject), ['alice']);
    for (const t of as.issued) assert.ok(!cli.stdout.includes(t));
    assert.equal(await linksCommand({ ...input, action: 'revoke', subject: undefined }, 'usage', io(out), io(err)), 2);
    out.length = 0;
    assert.equal(await linksCommand({ ...input, action: 'revoke' }, '', io(out), io(err)), 0, err.join(''));
    assert.match(out.join(''), /^revoked tickets\talice/m);
    for (const t of as.issued) assert.ok(!out.join('').includes(t));
    await consentUrl(await client(gateways[0]!, 'alice'), 'alice');
  });

  it('key rotation: a previous key opens and the entry is sealed again with the new key; a dropped key opens nothing', async () => {
    const a = gateways[0]!;
    const ca = await client(a, 'alice');
    as.loginAs = 'alice';
    const f = await authorize(a.base, await consentUrl(ca, 'alice'));
    assert.equal((await hop(f.callback, f.cookie)).status, 200);
    const before = await sealedKeyId('alice');
    const rotated = await start({ key: KEY2, previousKeys: [KEY1] });
    assert.equal(text(await whoami(await client(rotated, 'alice'), 'alice')), 'alice');
    const afterRotation = await sealedKeyId('alice');
    assert.ok(before && afterRotation && before !== afterRotation, 'sealed again with the new key');
    const onlyNew = await start({ key: KEY2 });
    assert.equal(text(await whoami(await client(onlyNew, 'alice'), 'alice')), 'alice', 'the new key alone opens it now');
    const unrelated = await start({ key: KEY3 });
    await consentUrl(await client(unrelated, 'alice'), 'alice');
  });

  // /oauth/start takes the flow (GETDEL, which Redis allows at its memory limit) and then records the
  // sign-in (SET, which it refuses there): the refusal used to end the route in a bare 500.
  it('a consent link opened while its sign-in cannot be recorded (Redis at maxmemory) answers 503 with Retry-After and a page, counted', async () => {
    const a = gateways[0]!;
    const url = await consentUrl(await client(a, 'bob'), 'bob');
    const shown = await openLink(a.base, url);
    assert.equal(shown.status, 200, shown.text);
    await raw.config('SET', 'maxmemory', '1');
    let res: Response;
    try {
      const body = new URLSearchParams({ flow: shown.flow!, confirm: shown.confirm! }).toString();
      const headers = { 'content-type': 'application/x-www-form-urlencoded', origin: PUBLIC_URL, 'sec-fetch-site': 'same-origin', cookie: shown.cookie! };
      res = await fetch(`${a.base}/oauth/start`, { method: 'POST', redirect: 'manual', headers, body });
    } finally {
      await raw.config('SET', 'maxmemory', '0');
    }
    const page = await res.text();
    assert.equal(res.status, 503, page);
    assert.ok(Number(res.headers.get('retry-after')) > 0, `Retry-After: ${res.headers.get('retry-after')}`);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page, /too many sign-ins in progress/);
    assert.match(page, /retry the call in your client for a new link/);
    assert.equal(res.headers.get('set-cookie'), null, 'no consent cookie');
    assert.ok(logLines.some((l) => l.includes('the sign-in could not be recorded')), 'logged');
    assert.match(await (await fetch(a.app.metricsUrl!)).text(), /^switchboard_consent_unavailable_total\{reason="store"\} 1$/m);
  });

  // /oauth/callback takes the state (GETDEL, allowed at the memory limit), redeems the code, then stores the
  // link (HSET, refused there) (found by a review): the refusal was told to the user as "the authorization
  // server could not be reached" (502), which sent them, and their operator, after the wrong service; a
  // store that could not be read at all ended the route in a bare 500.
  it('a callback whose link cannot be stored (Redis at maxmemory) answers 503 with Retry-After and says why', async () => {
    const a = gateways[0]!;
    as.loginAs = 'bob';
    const f = await authorize(a.base, await consentUrl(await client(a, 'bob'), 'bob'));
    await raw.config('SET', 'maxmemory', '1');
    let res: Response;
    try {
      res = await fetch(f.callback, { redirect: 'manual', headers: f.cookie ? { cookie: f.cookie } : {} });
    } finally {
      await raw.config('SET', 'maxmemory', '0');
    }
    const page = await res.text();
    assert.equal(res.status, 503, page);
    assert.ok(Number(res.headers.get('retry-after')) > 0, `Retry-After: ${res.headers.get('retry-after')}`);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.doesNotMatch(page, /authorization server could not be reached/);
    assert.match(page, /could not store your link/);
    assert.match(page, /retry the call in your client for a new link/);
    assert.ok(logLines.some((l) => l.includes('the link could not be stored')), 'logged');
    assert.match(await (await fetch(a.app.metricsUrl!)).text(), /^switchboard_consent_unavailable_total\{reason="store"\} 2$/m);
  });

  it('no token, refresh token or vault key appears in a log line, /metrics or an admin API answer', async () => {
    const a = gateways[0]!;
    adminAnswers.push(JSON.stringify((await admin(a, 'GET', '/config')).body));
    const metrics = await Promise.all(gateways.map(async (g) => (await fetch(g.app.metricsUrl!)).text()));
    const secrets = [...as.issued, ...upstream.bearers, ...Object.values(tokens), KEY1, KEY2, KEY3];
    assert.ok(adminAnswers.length > 3 && logLines.length > 0);
    for (const s of secrets) {
      assert.ok(!logLines.some((l) => l.includes(s)), `a secret in a log line: ${logLines.find((l) => l.includes(s))}`);
      assert.ok(!metrics.some((m) => m.includes(s)), 'a secret in /metrics');
      assert.ok(!adminAnswers.some((x) => x.includes(s)), 'a secret in an admin API answer');
    }
    assert.ok(!adminAnswers.some((x) => x.includes('/oauth/start?flow=')), 'no consent link on the admin API');
  });
});
