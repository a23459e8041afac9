import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import type { StdioUpstreamConfig } from '../../../src/config/schema.js';
import { GatewayError } from '../../../src/errors.js';
import { planLaunch as planWith, type HostFacts } from '../../../src/sandbox/launch-plan.js';

/** What the transport factory hands a root gateway's plan: a user id of its own from the pool. */
const POOLED = { uid: 1_900_000_007, gid: 65534 };
const planLaunch = (u: StdioUpstreamConfig, h: HostFacts, pooled: { uid: number; gid: number } | null = POOLED) => planWith(u, h, pooled ?? undefined);

const BIN: Record<string, string> = { node: '/usr/bin/node', prlimit: '/usr/bin/prlimit', bwrap: '/usr/bin/bwrap', setpriv: '/usr/bin/setpriv' };
const FS: Record<string, { type: 'dir' | 'file' | 'symlink'; target?: string }> = {
  '/usr': { type: 'dir' },
  '/bin': { type: 'symlink', target: 'usr/bin' },
  '/lib': { type: 'symlink', target: 'usr/lib' },
  '/lib64': { type: 'dir' },
  '/usr/bin/node': { type: 'file' },
  '/srv/app': { type: 'dir' },
  '/srv/app/server.js': { type: 'file' },
  '/srv/app/data': { type: 'dir' },
  '/opt/tool': { type: 'dir' },
  '/opt/tool/bin/tool': { type: 'file' },
};

function host(over: Partial<HostFacts> = {}, missing: string[] = []): HostFacts {
  return {
    uid: 0,
    gid: 0,
    cwd: '/srv/app',
    env: { PATH: '/usr/bin', HOME: '/root', REDIS_URL: 'redis://secret', SIGNING_KEY: 'k', LANG: 'C.UTF-8' },
    which: (name) => (missing.includes(name) ? undefined : BIN[name]),
    systemTool: (name) => (missing.includes(name) ? undefined : BIN[name]),
    kind: (p) => FS[p],
    realpath: (p) => p,
    ...over,
  };
}

function upstream(extra: Record<string, unknown>): StdioUpstreamConfig {
  // The config file lies in the gateway's working directory, /srv/app: its relative paths resolve there.
  const cfg = parseConfig({ upstreams: [{ name: 'srv', transport: 'stdio', command: 'node', args: ['server.js'], ...extra }], endpoints: [{ path: '/mcp', upstreams: ['srv'] }] }, 'test', {}, '/srv/app');
  return cfg.upstreams[0] as StdioUpstreamConfig;
}

const refused = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (err: unknown) => err instanceof GatewayError && err.code === 'SWB_SANDBOX_UNAVAILABLE' && pattern.test(err.message));

describe('planLaunch', () => {
  it('defaults to the strict bubblewrap profile, as a user of its own when the gateway is root', () => {
    const p = planLaunch(upstream({ sandbox: { readOnly: ['.'] } }), host());
    assert.equal(p.profile, 'bubblewrap');
    assert.equal(p.file, '/usr/bin/bwrap');
    assert.equal(p.uid, POOLED.uid);
    assert.equal(p.gid, 65534);
    assert.equal(p.pooledUser, true);
    // Never as root: without a user for it, a root gateway refuses to start the server.
    assert.throws(() => planLaunch(upstream({ sandbox: {} }), host(), null), /must not run a sandboxed server as root/);
    for (const flag of ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session']) assert.ok(p.args.includes(flag), flag);
    assert.ok(!p.args.includes('--share-net'), 'no network by default');
    const sep = p.args.indexOf('--');
    assert.deepEqual(p.args.slice(sep + 1, sep + 2), ['/usr/bin/prlimit']);
    assert.deepEqual(p.args.slice(-3), ['--', '/usr/bin/node', '/srv/app/server.js']);
    // System trees as they are on the host: directories bound read-only, symlinks recreated.
    assert.ok(p.args.join(' ').includes('--ro-bind /usr /usr'));
    assert.ok(p.args.join(' ').includes('--symlink usr/bin /bin'));
    assert.ok(p.args.join(' ').includes('--ro-bind /lib64 /lib64'));
    assert.ok(!p.args.join(' ').includes('--ro-bind /etc /etc'), 'never all of /etc');
    assert.ok(!p.args.some((a) => a.includes('shadow')));
    assert.ok(p.args.join(' ').includes('--remount-ro /dev --remount-ro /'));
    assert.match(p.args.join(' '), /--size 67108864 --tmpfs \/dev\/shm/);
  });

  it('the environment holds only the basics and the declared variables', () => {
    const p = planLaunch(upstream({ sandbox: { readOnly: ['.'] }, env: { API_TOKEN: 'declared' } }), host());
    assert.deepEqual(p.env, { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8', TMPDIR: '/tmp', API_TOKEN: 'declared' });
    const none = planLaunch(upstream({ sandbox: 'none' }), host());
    assert.equal(none.env.REDIS_URL, undefined);
    assert.equal(none.env.SIGNING_KEY, undefined);
  });

  it("variables that make a program load code are set inside the sandbox, never given to bwrap on the host (found by a review)", () => {
    // Read-only here: one naming a writable path is refused outright (launch-plan-env-code.test.ts).
    const p = planLaunch(upstream({ sandbox: { writable: ['data'] }, env: { LD_PRELOAD: '/opt/tool/lib/hook.so', LD_LIBRARY_PATH: '/opt/tool/lib', GCONV_PATH: '/opt/tool/lib', API_TOKEN: 'declared' } }), host());
    // bwrap runs on the host, outside its namespaces: what they name would be loaded there, outside the sandbox.
    for (const k of ['LD_PRELOAD', 'LD_LIBRARY_PATH', 'GCONV_PATH']) assert.equal(p.env[k], undefined, k);
    assert.equal(p.env.API_TOKEN, 'declared');
    const inside = p.args.slice(0, p.args.indexOf('--'));
    for (const [k, v] of [['LD_PRELOAD', '/opt/tool/lib/hook.so'], ['LD_LIBRARY_PATH', '/opt/tool/lib'], ['GCONV_PATH', '/opt/tool/lib']]) {
      const at = inside.findIndex((a, i) => a === '--setenv' && inside[i + 1] === k);
      assert.ok(at >= 0 && inside[at + 2] === v, `${k} set inside`);
    }
    assert.ok(!p.args.includes('declared'), 'no other variable on the command line');
  });

  it('rlimits from the profile; CPU seconds only when set', () => {
    const p = planLaunch(upstream({ sandbox: { readOnly: ['.'], limits: { processes: 32, openFiles: 64, addressSpaceMb: 512, fileSizeMb: 10, cpuSeconds: 5 } } }), host());
    const args = p.args.join(' ');
    assert.match(args, /--nproc=32:32/);
    assert.match(args, /--nofile=64:64/);
    assert.match(args, new RegExp(`--as=${512 * 1024 * 1024}:`));
    assert.match(args, /--cpu=5:5/);
    assert.doesNotMatch(planLaunch(upstream({ sandbox: { readOnly: ['.'] } }), host()).args.join(' '), /--cpu=/);
  });

  it('declared paths are bound parents first; a configured working directory exists even when not shared', () => {
    const p = planLaunch(upstream({ sandbox: { readOnly: ['.'], writable: ['data'], network: true } }), host());
    const args = p.args.join(' ');
    assert.ok(args.indexOf('--ro-bind /srv/app /srv/app') < args.indexOf('--bind /srv/app/data /srv/app/data'));
    assert.ok(p.args.includes('--share-net'));
    assert.match(args, /--ro-bind-try \/etc\/resolv.conf/);
    const q = planLaunch(upstream({ command: '/usr/bin/node', cwd: '/srv/app', sandbox: {} }), host());
    assert.match(q.args.join(' '), /--dir \/srv\/app --chdir \/srv\/app/);
  });

  it("a sandboxed server gets a fixed PATH and a working directory of its own, never the gateway's", () => {
    const h = host({ env: { PATH: '/root/.nvm/bin:/usr/bin', HOME: '/root' } });
    const p = planLaunch(upstream({ args: ['server.js', '--port', '-', 'stdio', 'data'], sandbox: { readOnly: ['.'] } }), h);
    assert.equal(p.env.PATH, '/usr/local/bin:/usr/bin:/bin');
    // Its private /tmp; the arguments that name the gateway directory's files or folders are made absolute.
    assert.match(p.args.join(' '), /--chdir \/tmp --remount-ro/);
    assert.ok(!p.args.includes('--dir'), "the gateway's directory is not recreated in the sandbox");
    assert.deepEqual(p.args.slice(-6), ['/usr/bin/node', '/srv/app/server.js', '--port', '-', 'stdio', '/srv/app/data']);
    // Its program's directory comes first when the system's do not hold it; a declared PATH wins.
    const tool = planLaunch(upstream({ command: '/opt/tool/bin/tool', sandbox: { readOnly: ['/opt/tool'] } }), h);
    assert.equal(tool.env.PATH, '/opt/tool/bin:/usr/local/bin:/usr/bin:/bin');
    assert.equal(planLaunch(upstream({ env: { PATH: '/x' }, sandbox: { readOnly: ['.'] } }), h).env.PATH, '/x');
    const limits = planLaunch(upstream({ sandbox: { type: 'limits' } }), h);
    assert.equal(limits.cwd, '/tmp');
    assert.equal(limits.env.PATH, '/usr/local/bin:/usr/bin:/bin');
    // A configured cwd is where it runs, and its arguments stay as written.
    const configured = planLaunch(upstream({ cwd: '/srv/app', sandbox: { type: 'limits' } }), h);
    assert.equal(configured.cwd, '/srv/app');
    assert.deepEqual(configured.args.slice(-2), ['/usr/bin/node', 'server.js']);
    // `none` is trusted and runs as configured: the gateway's PATH and working directory.
    const none = planLaunch(upstream({ sandbox: 'none' }), h);
    assert.equal(none.env.PATH, '/root/.nvm/bin:/usr/bin');
    assert.equal(none.cwd, '/srv/app');
  });

  it('writableSizeMb makes each writable path a size-limited tmpfs instead of the host folder', () => {
    const p = planLaunch(upstream({ sandbox: { readOnly: ['.'], writable: ['data'], writableSizeMb: 8 } }), host());
    const args = p.args.join(' ');
    assert.match(args, /--ro-bind \/srv\/app \/srv\/app --size 8388608 --tmpfs \/srv\/app\/data/);
    assert.ok(!args.includes('--bind /srv/app/data'));
    assert.equal(p.summary.writableSizeMb, 8);
    assert.throws(() => upstream({ sandbox: { type: 'limits', writableSizeMb: 8 } }), /writableSizeMb: needs type bubblewrap/);
  });

  it('refuses a program outside the sandbox or inside a writable path', () => {
    refused(() => planLaunch(upstream({ command: '/opt/tool/bin/tool', sandbox: {} }), host()), /outside the sandbox: add its directory to sandbox.readOnly/);
    refused(() => planLaunch(upstream({ command: './server.js', sandbox: { writable: ['.'] } }), host()), /could replace its own program/);
    refused(() => planLaunch(upstream({ args: ['server.js'], sandbox: { readOnly: ['/usr'], writable: ['.'] } }), host()), /its code \/srv\/app\/server.js lies inside the writable path/);
    refused(() => planLaunch(upstream({ command: 'nope', sandbox: {} }), host()), /"nope" was not found on PATH/);
    refused(() => planLaunch(upstream({ sandbox: { readOnly: ['./missing'] } }), host()), /sandbox path "\/srv\/app\/missing" does not exist/);
  });

  it('fails closed without bubblewrap or prlimit, and never falls back to running unconfined', () => {
    refused(() => planLaunch(upstream({ sandbox: {} }), host({}, ['bwrap'])), /needs bubblewrap \(bwrap\), which is not installed/);
    refused(() => planLaunch(upstream({ sandbox: { type: 'limits' } }), host({}, ['prlimit'])), /needs prlimit/);
    refused(() => planLaunch(upstream({ sandbox: { type: 'limits' } }), host({}, ['setpriv'])), /needs setpriv \(util-linux\) to set no_new_privs and die with the gateway/);
  });

  it('the limits profile: prlimit as a non-root user, no namespaces', () => {
    const p = planLaunch(upstream({ sandbox: { type: 'limits', user: { uid: 1000, gid: 1000 } } }), host());
    assert.equal(p.profile, 'limits');
    // no_new_privs and death with the gateway (setpriv), then the rlimits (prlimit), then the server.
    assert.equal(p.file, '/usr/bin/setpriv');
    assert.deepEqual(p.args.slice(0, 5), ['--no-new-privs', '--pdeathsig', 'KILL', '--', '/usr/bin/prlimit']);
    assert.deepEqual(p.probe, { file: '/usr/bin/setpriv', args: [...p.args.slice(0, -2), '/usr/bin/prlimit', '--version'] });
    assert.equal(p.uid, 1000);
    assert.deepEqual(p.args.slice(-3), ['--', '/usr/bin/node', '/srv/app/server.js']);
    // A non-root gateway keeps its own user and cannot pick another.
    const own = planLaunch(upstream({ sandbox: { type: 'limits' } }), host({ uid: 10001, gid: 10001 }));
    assert.equal(own.uid, undefined);
    refused(() => planLaunch(upstream({ sandbox: { type: 'limits', user: { uid: 1, gid: 1 } } }), host({ uid: 10001, gid: 10001 })), /needs a gateway running as root/);
  });

  it('a configured cwd that is not there is refused by name, not left to spawn to blame the program (found by a review)', () => {
    // Started there, the program was reported missing: "cannot start "/usr/bin/setpriv": spawn /usr/bin/setpriv ENOENT".
    refused(() => planLaunch(upstream({ command: '/usr/bin/node', cwd: '/srv/gone', sandbox: 'none' }), host()), /its cwd \/srv\/gone does not exist/);
    refused(() => planLaunch(upstream({ command: '/usr/bin/node', cwd: '/srv/gone', sandbox: { type: 'limits' } }), host()), /its cwd \/srv\/gone does not exist/);
    refused(() => planLaunch(upstream({ command: '/usr/bin/node', cwd: '/srv/app/server.js', sandbox: { type: 'limits' } }), host()), /its cwd \/srv\/app\/server.js is not a directory/);
    // An existing one is used; bubblewrap makes one inside the sandbox when it is not among the shared paths.
    assert.equal(planLaunch(upstream({ command: '/usr/bin/node', cwd: '/srv/app/data', sandbox: { type: 'limits' } }), host()).cwd, '/srv/app/data');
    assert.ok(planLaunch(upstream({ command: '/usr/bin/node', cwd: '/srv/gone', sandbox: {} }), host()).args.includes('--chdir'));
  });

  it('config: limits cannot claim filesystem or network confinement; none must be written out', () => {
    assert.throws(() => upstream({ sandbox: { type: 'limits', readOnly: ['/x'] } }), /readOnly: needs type bubblewrap/);
    assert.throws(() => upstream({ sandbox: { type: 'limits', network: false } }), /network: needs type bubblewrap/);
    assert.throws(() => upstream({ sandbox: { user: { uid: 0, gid: 0 } } }), /never root/);
    assert.equal((upstream({}).sandbox as { type: string }).type, 'bubblewrap');
    assert.equal(upstream({ sandbox: 'none' }).sandbox, 'none');
  });
});
