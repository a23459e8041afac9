// A malicious stdio server (test/fixtures/hostile-server.mjs) behind a real gateway, in the strict
// bubblewrap profile and in the Kubernetes `limits` profile. Each attack is made through the official
// SDK client, and its outcome is checked against what the attack would achieve unconfined. Meanwhile
// a second session keeps calling a benign upstream: none of its calls may fail.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SandboxConfig } from '../../src/config/schema.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';

const ROOT = resolve('.');
const HOSTILE = 'test/fixtures/hostile-server.mjs';
const SECRET = `swb-gateway-secret-${process.pid}-${Date.now()}`;
const NEIGHBOUR_SECRET = `swb-neighbour-secret-${process.pid}`;
const ROOT_USER = process.getuid?.() === 0;
/** A declared LD_LIBRARY_PATH (harmless: a folder that is not there) that must reach the server, not bwrap. */
const LOADER_MARK = '/swb-no-such-lib-dir';
/** A root gateway gives each sandboxed instance a user id of its own from 1,900,000,000 up, group 65534. */
const isSandboxUser = (uid: number) => (ROOT_USER ? uid >= 1_900_000_000 : uid === process.getuid!());

type Json = Record<string, any>;

async function call(client: Client, name: string, args: Json = {}): Promise<string> {
  const r = await client.callTool({ name, arguments: args });
  return textOf(r);
}
const json = async (client: Client, name: string, args: Json = {}) => JSON.parse(await call(client, name, args)) as Json;

/** Runs `attack` while a benign session calls its upstream every few milliseconds; none may fail. */
async function whileServingOthers<T>(benign: Client, attack: () => Promise<T>): Promise<T> {
  let done = false;
  let ok = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (!done) {
      try {
        const r = await benign.callTool({ name: 'test_simple_text', arguments: {} });
        if (textOf(r).length > 0) ok++;
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

type SandboxInput = 'none' | Partial<Exclude<SandboxConfig, 'none'>> | Record<string, unknown>;
/**
 * `node` is the Node running the tests. One that CI installed for a Node line (.cache/node24) lies outside
 * the system trees a bubblewrap sandbox shows, so its folder is shown read-only as well.
 */
const NODE_DIR = dirname(process.execPath);
const NODE_MOUNT = ['/usr/', '/bin/'].some((tree) => NODE_DIR.startsWith(tree)) ? [] : [NODE_DIR];
const withNode = (sandbox: SandboxInput): SandboxInput =>
  typeof sandbox === 'object' && (sandbox.type ?? 'bubblewrap') === 'bubblewrap'
    ? { ...sandbox, readOnly: [...((sandbox.readOnly as string[] | undefined) ?? []), ...NODE_MOUNT] }
    : sandbox;
const hostile = (name: string, sandbox: SandboxInput, extra: Json = {}) => ({
  name,
  transport: 'stdio' as const,
  command: 'node',
  args: [HOSTILE],
  sandbox: withNode(sandbox) as SandboxConfig,
  env: { GREETING: 'declared' },
  maxLineBytes: 1024 * 1024,
  maxResultBytes: 64 * 1024,
  restart: { initialDelayMs: 50, maxDelayMs: 200 },
  healthCheck: { intervalMs: 0 },
  ...extra,
});

describe('a hostile stdio server, sandboxed', () => {
  let gw: RunningGateway;
  let work: string;
  let data: string;
  let scratch: string;
  let strict: Client;
  let quota: Client;
  let limited: Client;
  let open: Client;
  let benign: Client;
  const logLines: string[] = [];

  before(async () => {
    process.env.SWB_TEST_GATEWAY_SECRET = SECRET;
    work = mkdtempSync(join(tmpdir(), 'swb-hostile-'));
    chmodSync(work, 0o755);
    data = join(work, 'data');
    mkdirSync(data);
    // Shared with the sandbox through its group (each instance has a user of its own).
    if (ROOT_USER) {
      chownSync(data, 0, 65534);
      chmodSync(data, 0o775);
    }
    writeFileSync(join(work, 'neighbour-secret.txt'), 'not for the sandbox\n');
    scratch = join(work, 'scratch');
    mkdirSync(scratch);
    gw = await startGateway(
      {
        upstreams: [
          hostile('strict', { readOnly: ['test/fixtures'], writable: [data], limits: { processes: 64 } }, { env: { GREETING: 'declared', NEIGHBOUR_SECRET, LD_LIBRARY_PATH: LOADER_MARK } }),
          hostile('limited', { type: 'limits', limits: { processes: 400 } }),
          // Control: the same profile with the network, so a blocked connection is not a broken test.
          hostile('networked', { readOnly: ['test/fixtures'], network: true }),
          // A writable path with a quota: a tmpfs of 8 MiB over it, nothing written to the host's disk.
          hostile('quota', { readOnly: ['test/fixtures'], writable: [scratch], writableSizeMb: 8 }),
          { name: 'benign', transport: 'stdio', ...FIXTURE },
        ],
        endpoints: [
          { path: '/strict', upstreams: ['strict'] },
          { path: '/limited', upstreams: ['limited'] },
          { path: '/networked', upstreams: ['networked'] },
          { path: '/quota', upstreams: ['quota'] },
          { path: '/benign', upstreams: ['benign'] },
        ],
      },
      { logLines },
    );
    [strict, limited, open, quota, benign] = await Promise.all(
      ['/strict', '/limited', '/networked', '/quota', '/benign'].map((path) => connectClient(gw, 'streamable-http', { path })),
    );
  });

  after(async () => {
    delete process.env.SWB_TEST_GATEWAY_SECRET;
    await Promise.all([strict, limited, open, quota, benign].map((c) => c?.close().catch(() => {})));
    await gw?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('runs as the unprivileged sandbox user, in its own pid and uts namespaces', async () => {
    const me = await json(strict, 'whoami');
    assert.ok(isSandboxUser(me.uid), `uid ${me.uid}`);
    assert.equal(me.hostname, 'sandbox');
    assert.ok(me.pid < 10, `pid ${me.pid} is from a private pid namespace`);
    // Its own working directory (its private /tmp), not the gateway's; its relative arguments were made absolute.
    assert.equal(me.cwd, '/tmp');
    const lim = await json(limited, 'whoami');
    assert.ok(isSandboxUser(lim.uid), `uid ${lim.uid}`);
    // limits: no private /tmp, so a folder of its own in the host's.
    assert.match(lim.cwd, /^\/tmp\/switchboard-home-\w+$/);
    if (ROOT_USER) assert.notEqual(lim.uid, me.uid, 'no two instances share a user');
  });

  it("cannot see another sandboxed server's environment or processes (each runs as a user of its own)", async () => {
    assert.equal((await json(strict, 'environment')).NEIGHBOUR_SECRET, NEIGHBOUR_SECRET, 'control: the secret is in its own environment');
    // limits: no pid namespace, so the strict server's processes are listed in /proc, but not readable.
    assert.deepEqual((await json(limited, 'scan_environ', { marker: NEIGHBOUR_SECRET })).hits, []);
    assert.deepEqual((await json(open, 'scan_environ', { marker: NEIGHBOUR_SECRET })).hits, []);
  });

  it('cannot read /etc/shadow, the gateway config or keys, or a neighbouring file', async () => {
    await whileServingOthers(benign, async () => {
      assert.match(await call(strict, 'read_file', { path: '/etc/shadow' }), /^ERROR ENOENT/);
      assert.match(await call(strict, 'read_file', { path: join(ROOT, 'deploy/dev-keys/dev-private.jwk.json') }), /^ERROR ENOENT/);
      assert.match(await call(strict, 'read_file', { path: join(ROOT, 'package.json') }), /^ERROR ENOENT/);
      assert.match(await call(strict, 'read_file', { path: join(work, 'neighbour-secret.txt') }), /^ERROR ENOENT/);
      // Control: what it was given is readable.
      assert.match(await call(strict, 'read_file', { path: join(ROOT, HOSTILE) }), /malicious stdio MCP server/);
      if (ROOT_USER) assert.match(await call(limited, 'read_file', { path: '/etc/shadow' }), /^ERROR EACCES/);
    });
  });

  it("never sees the gateway's environment: only the basics and what was declared", async () => {
    // PWD: bubblewrap sets it when it changes into the working directory.
    const allowed = new Set(['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'PWD', 'GREETING', 'NEIGHBOUR_SECRET', 'LD_LIBRARY_PATH']);
    for (const client of [strict, limited]) {
      const env = await json(client, 'environment');
      assert.equal(env.GREETING, 'declared');
      assert.deepEqual(Object.keys(env).filter((k) => !allowed.has(k)), [], 'no undeclared variables');
      // A fixed PATH (its program's folder first when that is not a system one), never the gateway's; PWD,
      // where set, is its own directory.
      assert.equal(env.PATH, [...(['/usr/local/bin', '/usr/bin', '/bin'].includes(NODE_DIR) ? [] : [NODE_DIR]), '/usr/local/bin', '/usr/bin', '/bin'].join(':'));
      assert.ok(env.PWD === undefined || env.PWD === '/tmp', `PWD ${env.PWD}`);
      assert.ok(!JSON.stringify(env).includes(SECRET));
      assert.deepEqual((await json(client, 'scan_environ', { marker: SECRET })).hits, [], "no readable /proc/*/environ holds the gateway's secret");
    }
    assert.equal(process.env.SWB_TEST_GATEWAY_SECRET, SECRET, 'the secret really is in the gateway process');
  });

  it('has its declared loader variables set inside the sandbox, never in bwrap on the host (found by a review)', async () => {
    assert.equal((await json(strict, 'environment')).LD_LIBRARY_PATH, LOADER_MARK);
    // bwrap stays on the host, outside the namespaces it made: a declared LD_PRELOAD naming a file the server
    // may write would have that file loaded there at the server's next start.
    const bwraps = readdirSync('/proc').filter((p) => /^\d+$/.test(p) && readText(`/proc/${p}/comm`).trim() === 'bwrap');
    assert.ok(bwraps.length > 0, 'control: the sandboxed servers run under bwrap');
    for (const pid of bwraps) assert.ok(!readText(`/proc/${pid}/environ`).includes(LOADER_MARK), `bwrap ${pid} has the loader variable`);
  });

  it('cannot write outside its writable folder', async () => {
    await whileServingOthers(benign, async () => {
      for (const target of [join(ROOT, 'owned.txt'), '/usr/owned.txt', '/etc/owned.txt', '/owned.txt']) {
        const answer = await call(strict, 'write_file', { path: target });
        // A project checked out under /tmp sits in the sandbox's private /tmp: writable there, never on the host.
        if (!target.startsWith('/tmp/')) assert.match(answer, /^ERROR E(ROFS|ACCES|NOENT|PERM)/, target);
        assert.equal(existsSync(target), false, `${target} was not created on the host`);
      }
      // Beside its writable folder is its private /tmp (the host's /tmp is not there): not the host's file.
      await call(strict, 'write_file', { path: join(work, 'owned.txt') });
      assert.equal(existsSync(join(work, 'owned.txt')), false, 'nothing written beside the writable folder on the host');
      assert.equal(await call(strict, 'write_file', { path: join(data, 'allowed.txt') }), 'written');
      assert.equal(readFileSync(join(data, 'allowed.txt'), 'utf8'), 'owned\n');
      // Its /tmp is its own, and gone with it.
      assert.equal(await call(strict, 'write_file', { path: '/tmp/mine.txt' }), 'written');
    });
  });

  it('a write past writableSizeMb fails with ENOSPC; nothing reaches the host disk; the server and gateway go on', async () => {
    const result = await whileServingOthers(benign, () => json(quota, 'fill', { path: join(scratch, 'big.bin'), bytes: 32 * 1024 * 1024 }));
    assert.match(String(result.error), /^(ENOSPC|EFBIG)$/);
    assert.ok(result.written <= 8 * 1024 * 1024, `wrote ${result.written} bytes into an 8 MiB path`);
    assert.deepEqual(readdirSync(scratch), [], "nothing was written to the host's folder");
    // Below the quota (the full file truncated first) the path is writable, and the server still answers.
    assert.deepEqual(await json(quota, 'fill', { path: join(scratch, 'big.bin'), bytes: 1024 }), { written: 1024, error: null });
    assert.equal(await call(quota, 'echo', { text: 'still here' }), 'still here');
  });

  it('cannot open network connections unless its profile allows them', async () => {
    const port = Number(new URL(gw.base).port);
    await whileServingOthers(benign, async () => {
      // Loopback inside its own network namespace: the gateway's port is not there.
      assert.match(await call(strict, 'connect', { host: '127.0.0.1', port }), /^ERROR (ECONNREFUSED|ENETUNREACH)/);
      assert.match(await call(strict, 'connect', { host: '10.255.255.1', port: 80 }), /^ERROR (ENETUNREACH|EHOSTUNREACH|timeout)/);
      assert.equal(await call(open, 'connect', { host: '127.0.0.1', port }), 'connected', 'control: a networked profile reaches the gateway');
    });
  });

  it('a fork bomb stops at the process limit; the gateway and other sessions are unaffected', async () => {
    const result = await whileServingOthers(benign, () => json(strict, 'fork_bomb', { max: 500 }));
    assert.ok(result.spawned < 64, `spawned ${result.spawned} processes under a limit of 64`);
    assert.match(String(result.error), /EAGAIN/);
    assert.equal(await call(strict, 'echo', { text: 'still here' }), 'still here');
  });

  it('one giant line on stdout fails the call, restarts the server, and never buffers past the limit', async () => {
    const before = await json(strict, 'whoami');
    const rss = process.memoryUsage().rss;
    await whileServingOthers(benign, async () => {
      await assert.rejects(strict.callTool({ name: 'flood', arguments: { bytes: 256 * 1024 * 1024 } }), /more than 1048576 bytes \(maxLineBytes\)/);
    });
    assert.ok(process.memoryUsage().rss - rss < 128 * 1024 * 1024, 'the gateway did not buffer the flood');
    assert.ok(logLines.some((l) => l.includes('flooded its stdout past maxLineBytes')));
    // A new process serves the session (the same pid inside a fresh namespace is possible: ask twice).
    let after: Json | undefined;
    for (let i = 0; i < 50 && !after; i++) {
      after = await json(strict, 'whoami').catch(() => undefined);
      if (!after) await sleep(50);
    }
    assert.ok(after, 'the server came back');
    assert.equal(gw.app.gateway.pools.get('strict')!.instances.values().next().value!.restarts >= 1, true);
    assert.ok(isSandboxUser(after.uid) && isSandboxUser(before.uid));
  });

  it('a tool description changed after start (rug pull) is withheld until approved', async () => {
    const names = async () => (await limited.listTools()).tools.map((t) => t.name);
    assert.ok((await names()).includes('summarize'));
    assert.equal(await call(limited, 'summarize', { text: 'hello' }), 'summary: hello');
    await whileServingOthers(benign, async () => {
      assert.equal(await call(limited, 'rug_pull'), 'pulled');
      assert.ok(!(await names()).includes('summarize'), 'the changed tool is left out of tools/list');
      await assert.rejects(limited.callTool({ name: 'summarize', arguments: { text: 'x' } }), /withheld: its definition changed since it was pinned; an operator must approve it with "switchboard pins approve limited summarize --hash [0-9a-f]{64}"$/);
    });
    assert.ok((await names()).includes('echo'), 'unchanged tools stay');
    assert.ok(logLines.some((l) => l.includes('"action":"withheld"') && l.includes('"tool":"summarize"')), 'audited');
  });

  it('a result over maxResultBytes fails that call only', async () => {
    const pid = gw.app.gateway.pools.get('strict')!.instances.values().next().value!.pid;
    await assert.rejects(strict.callTool({ name: 'big_result', arguments: { bytes: 200_000 } }), /more than the limit of 65536 \(maxResultBytes\)/);
    assert.equal(await call(strict, 'echo', { text: 'fine' }), 'fine');
    assert.equal(gw.app.gateway.pools.get('strict')!.instances.values().next().value!.pid, pid, 'not restarted');
  });
});

describe('a sandbox that cannot be built fails closed', () => {
  it('an unusable profile never starts the program; clients get an incident id, the log the reason', async () => {
    const hidden = mkdtempSync(join(tmpdir(), 'swb-hidden-')); // 0700: the sandbox user cannot look inside
    mkdirSync(join(hidden, 'inner'));
    const logLines: string[] = [];
    const unbindable = { readOnly: ['test/fixtures', join(hidden, 'inner')] };
    const gw = await startGateway(
      {
        upstreams: [
          hostile('unbindable', unbindable),
          // The same sandbox for another upstream: one probe in flight serves both, and names neither.
          hostile('twin', unbindable),
          // The program itself is not among the paths the sandbox shows: refused before anything runs.
          hostile('outside', { readOnly: [] }, { command: join(ROOT, HOSTILE), args: [] }),
        ],
        endpoints: [
          { path: '/unbindable', upstreams: ['unbindable'] },
          { path: '/twin', upstreams: ['twin'] },
          { path: '/outside', upstreams: ['outside'] },
        ],
      },
      { logLines },
    );
    /** The client's error names its own upstream and an incident, nothing of the host; the log has the reason. */
    const refusal = async (client: Client, name: string): Promise<string> => {
      const err = await client.callTool({ name: 'whoami', arguments: {} }).then(() => assert.fail('the call succeeded'), (e: Error) => e);
      assert.match(err.message, new RegExp(`upstream "${name}" could not start in its sandbox \\(incident [0-9a-f]{12}\\); an operator can find the reason in the gateway's log`));
      for (const other of ['unbindable', 'twin', 'outside'].filter((n) => n !== name)) assert.ok(!err.message.includes(`"${other}"`), `${name}: no other upstream named`);
      assert.ok(!err.message.includes(tmpdir()) && !err.message.includes(ROOT) && !err.message.includes('bwrap'), `${name}: no host paths: ${err.message}`);
      const incident = /incident ([0-9a-f]{12})/.exec(err.message)![1];
      const logged = logLines.map((l) => JSON.parse(l) as Json).find((l) => l.msg === 'upstream sandbox refused' && l.incident === incident);
      assert.ok(logged, `incident ${incident} is in the log`);
      assert.equal(logged.upstream, name);
      return logged.reason as string;
    };
    try {
      const [a, t, b] = await Promise.all(['/unbindable', '/twin', '/outside'].map((path) => connectClient(gw, 'streamable-http', { path })));
      if (ROOT_USER) {
        for (const [client, name] of [[a!, 'unbindable'], [t!, 'twin']] as const) {
          const reason = await refusal(client, name);
          assert.match(reason, /sandbox cannot be set up here: bwrap: .*inner.*Permission denied/s, 'bubblewrap\'s own words, for the operator');
          assert.doesNotMatch(reason, /user namespaces/, 'the hint matches the cause (a directory permission)');
          assert.match(reason, /search permission/);
        }
      }
      assert.match(await refusal(b!, 'outside'), /hostile-server\.mjs is outside the sandbox: add its directory to sandbox\.readOnly/);
      for (const name of ['unbindable', 'twin', 'outside']) {
        const inst = gw.app.gateway.pools.get(name)!.instances.values().next().value!;
        assert.notEqual(inst.state, 'ready');
      }
      await Promise.all([a!.close(), t!.close(), b!.close()]);
    } finally {
      await gw.close();
      rmSync(hidden, { recursive: true, force: true });
    }
  });
});

/** A /proc file's text, or '' for a process gone meanwhile (or not ours to read). */
function readText(path: string): string {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return '';
  }
}
