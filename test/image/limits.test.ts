// The `limits` sandbox inside the image, configured as the Helm chart configures it (`sandbox: { type:
// limits }`, pod hardened as in test/image/podman.ts): the hostile server of the sandbox suite
// (test/fixtures/hostile-server.mjs, mounted read-only) behind the containerised gateway, attacked through
// the published port with the official SDK client while a second session calls the demo echo upstream.
// The checks are those of test/integration/hostile-server.test.ts that apply to `limits` (no namespaces:
// no private /tmp, network or pid view; the pod's user is shared), plus what the pod adds: a read-only root.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { IMAGE, startContainer, waitFor200, type Container } from './podman.js';
import { textOf } from '../helpers/sdk.js';
import { connectWithToken, JwksServer, makeKey, signToken, type TokenClient } from '../helpers/tokens.js';

type Json = Record<string, any>;
const ISSUER = 'https://idp.image.test';
const AUDIENCE = 'http://localhost:8080';
const GATEWAY_SECRET = `swb-gateway-secret-${process.pid}-${Date.now()}`;
const NEIGHBOUR_SECRET = `swb-neighbour-secret-${process.pid}`;
const PROCESSES = 128;

const call = async (client: Client, name: string, args: Json = {}) => textOf(await client.callTool({ name, arguments: args }));
const json = async (client: Client, name: string, args: Json = {}) => JSON.parse(await call(client, name, args)) as Json;

/** The gateway config the chart would mount, with hostile upstreams in the chart's sandbox profile. */
function config(): string {
  const hostile = (name: string, extra: Json = {}) => ({
    name,
    transport: 'stdio',
    sandbox: { type: 'limits', limits: { processes: PROCESSES } },
    command: 'node',
    args: ['/opt/hostile/hostile-server.mjs'],
    env: { GREETING: 'declared', ...extra },
    maxLineBytes: 1024 * 1024,
    maxResultBytes: 64 * 1024,
    restart: { initialDelayMs: 50, maxDelayMs: 200 },
    healthCheck: { intervalMs: 0 },
  });
  return JSON.stringify({
    server: { host: '0.0.0.0', port: 8080, publicUrl: AUDIENCE },
    metrics: { host: '0.0.0.0', port: 9464 },
    auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: '${JWT_JWKS_URL}' },
    tenants: [{ name: 'default', endpoints: ['*'] }],
    upstreams: [
      hostile('limited'),
      hostile('neighbour', { NEIGHBOUR_SECRET }),
      { name: 'benign', transport: 'stdio', sandbox: { type: 'limits' }, command: 'node', args: ['/app/examples/echo-server.mjs'] },
    ],
    endpoints: ['limited', 'neighbour', 'benign'].map((u) => ({ path: `/${u}`, upstreams: [u] })),
  });
}

describe(`the limits sandbox inside ${IMAGE}, as the chart configures it`, { skip: !IMAGE && 'SWB_IMAGE is not set (run npm run image:test)' }, () => {
  let c: Container;
  let jwks: JwksServer;
  let dir: string;
  const clients: TokenClient[] = [];
  let limited: Client;
  let neighbour: Client;
  let benign: Client;

  /** Runs `attack` while the benign session calls its upstream every few milliseconds; none may fail. */
  async function whileServingOthers<T>(attack: () => Promise<T>): Promise<T> {
    let done = false;
    let ok = 0;
    const failures: string[] = [];
    const loop = (async () => {
      while (!done) {
        try {
          if ((await call(benign, 'echo', { message: 'still here' })) === 'still here') ok++;
        } catch (err) {
          failures.push((err as Error).message);
        }
        await sleep(10);
      }
    })();
    try {
      return await attack();
    } finally {
      done = true;
      await loop;
      assert.deepEqual(failures, [], 'the benign session kept working during the attack');
      assert.ok(ok > 0, 'the benign session made calls during the attack');
    }
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-image-limits-'));
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'config.yaml'), config(), { mode: 0o644 });
    const key = await makeKey('image-key', 'ES256');
    jwks = await JwksServer.start([key.publicJwk], '0.0.0.0'); // a public key only; the container reaches it over its bridge
    c = await startContainer({
      // A Secret's value reaches the pod as an environment variable: the servers must not find it.
      env: { JWT_JWKS_URL: `http://host.containers.internal:${new URL(jwks.url).port}/jwks.json`, UPSTREAM_TOKEN: GATEWAY_SECRET },
      mounts: [`${join(dir, 'config.yaml')}:/etc/switchboard/config.yaml:ro`, `${resolve('test/fixtures')}:/opt/hostile:ro`],
    });
    await waitFor200(c, `${c.url(8080)}/readyz`);
    const token = await signToken(key, { iss: ISSUER, aud: AUDIENCE, tenant: 'default', sub: 'image-limits' });
    const gw = { url: (path = '/mcp') => new URL(path, c.url(8080)) };
    for (const path of ['/limited', '/neighbour', '/benign']) clients.push(await connectWithToken(gw, 'streamable-http', token, { path }));
    [limited, neighbour, benign] = clients.map((t) => t.client) as [Client, Client, Client];
  });

  after(async () => {
    await Promise.all(clients.map((t) => t.close().catch(() => {})));
    await c?.remove();
    await jwks?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs as the pod's unprivileged user, in a folder of its own in /tmp", async () => {
    const me = await json(limited, 'whoami');
    assert.equal(me.uid, 10001);
    assert.equal(me.gid, 10001);
    assert.match(me.cwd, /^\/tmp\/switchboard-home-\w+$/);
  });

  it("never gets the gateway's environment: only the basics and what was declared", async () => {
    const allowed = new Set(['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'PWD', 'GREETING']);
    const env = await json(limited, 'environment');
    assert.equal(env.GREETING, 'declared');
    assert.deepEqual(Object.keys(env).filter((k) => !allowed.has(k)), [], 'no undeclared variables');
    // node is /usr/local/bin/node in the image: a system folder, so the fixed PATH alone.
    assert.equal(env.PATH, '/usr/local/bin:/usr/bin:/bin');
    assert.ok(!JSON.stringify(env).includes(GATEWAY_SECRET));
  });

  // With `limits` the server runs as the pod's user, the gateway's too: what keeps it out of tini's and the
  // gateway's /proc/<pid>/environ (every Secret passed as a variable) is that both run a program their user
  // cannot read (node and tini are 0711 in the image), which makes them non-dumpable.
  it("cannot find the gateway's secret in any readable /proc/*/environ (tini and the gateway are not dumpable)", async () => {
    const who = await json(limited, 'whoami');
    assert.equal(who.uid, 10001, 'control: the server runs as the gateway user');
    assert.deepEqual((await json(limited, 'scan_environ', { marker: GATEWAY_SECRET })).hits, []);
  });

  it('cannot read /etc/shadow; cannot write to the image (read-only root), only to /tmp', async () => {
    await whileServingOthers(async () => {
      assert.match(await call(limited, 'read_file', { path: '/etc/shadow' }), /^ERROR EACCES/);
      for (const target of ['/app/owned.txt', '/app/dist/main.js', '/usr/owned.txt', '/etc/owned.txt', '/owned.txt']) {
        assert.match(await call(limited, 'write_file', { path: target }), /^ERROR E(ROFS|ACCES)/, target);
      }
      assert.equal(await call(limited, 'write_file', { path: '/tmp/mine.txt' }), 'written');
    });
  });

  it('a fork bomb stops at the process limit; the gateway and other sessions are unaffected', async () => {
    const result = await whileServingOthers(() => json(limited, 'fork_bomb', { max: 500 }));
    assert.ok(result.spawned < PROCESSES, `spawned ${result.spawned} processes under a limit of ${PROCESSES}`);
    assert.match(String(result.error), /EAGAIN/);
    assert.equal(await call(limited, 'echo', { text: 'still here' }), 'still here');
  });

  it('one giant line on stdout fails the call and restarts the server', async () => {
    const before = await json(limited, 'whoami');
    await whileServingOthers(async () => {
      await assert.rejects(limited.callTool({ name: 'flood', arguments: { bytes: 256 * 1024 * 1024 } }), /more than 1048576 bytes \(maxLineBytes\)/);
    });
    let after: Json | undefined;
    for (let i = 0; i < 100 && !after; i++) {
      after = await json(limited, 'whoami').catch(() => undefined);
      if (!after) await sleep(50);
    }
    assert.ok(after, 'the server came back');
    assert.notEqual(after.pid, before.pid, 'a new process');
    assert.match(await c.logs(), /flooded its stdout past maxLineBytes/);
    const metrics = await (await fetch(`${c.url(9464)}/metrics`)).text();
    assert.match(metrics, /^switchboard_upstream_restarts_total\{upstream="limited"\} [1-9]/m);
  });

  it('a result over maxResultBytes fails that call only', async () => {
    const pid = (await json(limited, 'whoami')).pid;
    await assert.rejects(limited.callTool({ name: 'big_result', arguments: { bytes: 200_000 } }), /more than the limit of 65536 \(maxResultBytes\)/);
    assert.equal((await json(limited, 'whoami')).pid, pid, 'not restarted');
  });

  it('a tool description changed after start (rug pull) is withheld until approved', async () => {
    const names = async () => (await neighbour.listTools()).tools.map((t) => t.name);
    assert.ok((await names()).includes('summarize'));
    await whileServingOthers(async () => {
      assert.equal(await call(neighbour, 'rug_pull'), 'pulled');
      assert.ok(!(await names()).includes('summarize'), 'the changed tool is left out of tools/list');
      await assert.rejects(neighbour.callTool({ name: 'summarize', arguments: { text: 'x' } }), /withheld: its definition changed since it was pinned/);
    });
  });
});
