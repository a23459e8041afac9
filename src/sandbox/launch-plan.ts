import { accessSync, constants, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { SandboxProfileConfig, StdioUpstreamConfig } from '../config/schema.js';
import { SYSTEM_TREES } from '../config/system-trees.js';
import { GatewayError } from '../errors.js';
import { childEnv } from './child-env.js';
import { envCodePaths } from './env-code-paths.js';
import { pythonCwdCode } from './python-cwd.js';

/** What the gateway's host looks like, injected so that plans are pure functions in tests. */
export interface HostFacts {
  /** The gateway's own user id (root may start children as another user; others may not). */
  uid: number;
  gid: number;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Absolute path of an executable found on PATH, or undefined. */
  which(name: string): string | undefined;
  /** Absolute path of a system tool (bwrap, prlimit, setpriv) from the system directories only, never from PATH. */
  systemTool(name: string): string | undefined;
  /** A path's kind without following a final symlink; undefined when it does not exist. */
  kind(path: string): { type: 'dir' | 'file' | 'symlink' | 'other'; target?: string } | undefined;
  realpath(path: string): string;
}

/** How to start one stdio server: the exact program, arguments, environment and user. */
export interface LaunchPlan {
  profile: 'bubblewrap' | 'limits' | 'none';
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  uid: number | undefined;
  gid: number | undefined;
  /** The user came from the pool: any pooled user can build the same sandbox (one probe serves them all). */
  pooledUser: boolean;
  /** A harmless command run in exactly this sandbox once, to fail closed with bubblewrap's own words. */
  probe: { file: string; args: string[] } | undefined;
  /** For the log line at each start: what the server can reach. */
  summary: Record<string, unknown>;
}

/** Directories system tools are taken from: a PATH entry earlier than these must not decide what wraps a server. */
const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];


/**
 * The few files of /etc that programs need to run (dynamic linking, user names, time zone, TLS roots).
 * Never all of /etc: it holds the host's shadow passwords, keys and service credentials.
 */
const ETC_FILES = [
  'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'passwd', 'group', 'nsswitch.conf', 'localtime', 'timezone',
  'ssl/certs', 'ca-certificates', 'ca-certificates.conf', 'alternatives', 'mime.types', 'os-release',
];
/** Name resolution, only for profiles with network access. */
const ETC_NETWORK = ['resolv.conf', 'hosts', 'host.conf', 'gai.conf', 'protocols', 'services'];

const MiB = 1024 * 1024;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function currentHost(): HostFacts {
  return {
    systemTool: (name) => SYSTEM_BIN.map((d) => join(d, name)).find(executable),
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    cwd: process.cwd(),
    env: process.env,
    which: (name) =>
      (process.env.PATH ?? '')
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, name))
        .find(executable),
    kind: (path) => {
      try {
        const st = lstatSync(path);
        if (st.isSymbolicLink()) return { type: 'symlink', target: readlinkSync(path) };
        return { type: st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other' };
      } catch {
        return undefined;
      }
    },
    realpath: (path) => {
      try {
        return realpathSync(path);
      } catch {
        return path;
      }
    },
  };
}

function unavailable(upstream: string, why: string): GatewayError {
  return new GatewayError('SWB_SANDBOX_UNAVAILABLE', `upstream "${upstream}" does not start: ${why}`, { upstream });
}

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** The program as an absolute path: what runs is decided here, from config only, never by PATH at exec time. */
function resolveCommand(u: StdioUpstreamConfig, cwd: string, host: HostFacts): string {
  const found = u.command.includes('/') ? resolve(cwd, u.command) : host.which(u.command);
  if (!found || !host.kind(found)) throw unavailable(u.name, `its command "${u.command}" was not found${u.command.includes('/') ? '' : ' on PATH'}`);
  return found;
}

/**
 * A configured working directory the server is started in on the host (`none`, `limits`) must be there:
 * spawn reports a missing one as the program's ENOENT ("spawn /usr/bin/setpriv ENOENT"), which sent the
 * operator looking for a program that is installed. Bubblewrap makes one in the sandbox (see bubblewrapPlan).
 */
function checkCwd(u: StdioUpstreamConfig, cwd: string, host: HostFacts): void {
  if (u.cwd === undefined) return;
  const kind = host.kind(host.realpath(cwd));
  if (kind?.type !== 'dir') throw unavailable(u.name, `its cwd ${cwd} ${kind ? 'is not a directory' : 'does not exist'}`);
}

/**
 * `pooled`: the user a root gateway gives this instance when the profile names none (one of its own,
 * see UidPool). A configured user is used as is; a non-root gateway cannot start anyone but itself.
 */
function userOf(u: StdioUpstreamConfig, profile: SandboxProfileConfig, host: HostFacts, pooled: { uid: number; gid: number } | undefined): { uid: number | undefined; gid: number | undefined } {
  const wanted = profile.user ?? (host.uid === 0 ? pooled : undefined);
  if (host.uid === 0 && !wanted) throw unavailable(u.name, 'no sandbox user: a root gateway must not run a sandboxed server as root (set sandbox.user)');
  if (!wanted) return { uid: undefined, gid: undefined };
  if (host.uid !== 0 && (wanted.uid !== host.uid || wanted.gid !== host.gid)) {
    throw unavailable(u.name, `sandbox.user ${wanted.uid}:${wanted.gid} needs a gateway running as root (it runs as ${host.uid})`);
  }
  return host.uid === 0 ? wanted : { uid: undefined, gid: undefined };
}

function prlimitArgs(l: SandboxProfileConfig['limits']): string[] {
  const pair = (n: number) => `${n}:${n}`;
  const args = [
    `--as=${pair(l.addressSpaceMb * MiB)}`,
    `--nofile=${pair(l.openFiles)}`,
    `--nproc=${pair(l.processes)}`,
    `--fsize=${pair(l.fileSizeMb * MiB)}`,
    '--core=0:0',
  ];
  if (l.cpuSeconds !== undefined) args.push(`--cpu=${pair(l.cpuSeconds)}`);
  return args;
}

/** A sandboxed server's PATH: its program's directory and the system's, never the gateway's own PATH. */
export const SANDBOX_PATH = ['/usr/local/bin', '/usr/bin', '/bin'];

function sandboxPath(program: string): string {
  const dir = dirname(program);
  return (SANDBOX_PATH.includes(dir) ? SANDBOX_PATH : [dir, ...SANDBOX_PATH]).join(':');
}

/**
 * Without a configured `cwd` a sandboxed server runs in its private /tmp, not in the gateway's working
 * directory: arguments that name an existing file or directory relative to the gateway's are made absolute
 * first, so that they mean what they meant.
 */
function absoluteArgs(u: StdioUpstreamConfig, cwd: string, host: HostFacts): string[] {
  if (u.cwd !== undefined) return [...u.args];
  return u.args.map((a) => (a.startsWith('-') || isAbsolute(a) || !host.kind(resolve(cwd, a)) ? a : resolve(cwd, a)));
}

/** What every sandboxed profile shares: the user, prlimit, the environment and the working directory. */
interface Confined {
  u: StdioUpstreamConfig;
  profile: SandboxProfileConfig;
  program: string;
  args: string[];
  /** Where relative paths of the config resolve on the host. */
  cwd: string;
  /** Where the server runs: its configured `cwd`, or its private /tmp. */
  workdir: string;
  env: Record<string, string>;
  uid: number | undefined;
  gid: number | undefined;
  who: { uid: number; gid: number };
  prlimit: string;
  limits: string[];
}

/**
 * Decides how a stdio server starts. `none` runs it as configured; `limits` wraps it in prlimit as a
 * non-root user; `bubblewrap` additionally gives it private namespaces and a filesystem made only of
 * the system trees, a few /etc files, a private /tmp and the declared paths. Every refusal names why.
 * `home`: with `limits`, the instance's own folder (PrivateHome), its HOME, TMPDIR and working directory.
 */
export function planLaunch(u: StdioUpstreamConfig, host: HostFacts = currentHost(), pooled?: { uid: number; gid: number }, home?: string): LaunchPlan {
  const cwd = resolve(host.cwd, u.cwd ?? '.');
  const program = resolveCommand(u, cwd, host);
  if (u.sandbox === 'none' || u.sandbox.type === 'limits') checkCwd(u, cwd, host);
  if (u.sandbox === 'none') {
    return { profile: 'none', file: program, args: [...u.args], env: childEnv(u.env, host.env), cwd, uid: undefined, gid: undefined, pooledUser: false, probe: undefined, summary: { sandbox: 'none', program } };
  }
  const profile = u.sandbox;
  const { uid, gid } = userOf(u, profile, host, pooled);
  const prlimit = host.systemTool('prlimit');
  if (!prlimit) throw unavailable(u.name, 'its sandbox needs prlimit (util-linux) to set resource limits, and it is not on PATH');
  // Its own folder: the private /tmp of bubblewrap; with limits, the one the gateway made for this instance
  // (PrivateHome), never the host's /tmp that every instance writes.
  const own = profile.type === 'bubblewrap' ? '/tmp' : (home ?? '/tmp');
  const workdir = u.cwd !== undefined ? cwd : own;
  // A fixed PATH: the gateway's own tells the server where the host keeps its tools (and whose they are).
  const env: Record<string, string> = { ...childEnv(u.env, host.env), PATH: u.env.PATH ?? sandboxPath(program) };
  // A user of its own has no business with the gateway's home, nor a server with another's.
  if (uid !== undefined || profile.type === 'bubblewrap' || home !== undefined) {
    if (u.env.HOME === undefined) env.HOME = own;
    if (u.env.TMPDIR === undefined) env.TMPDIR = own;
  }
  const c: Confined = { u, profile, program, args: absoluteArgs(u, cwd, host), cwd, workdir, env, uid, gid, who: { uid: uid ?? host.uid, gid: gid ?? host.gid }, prlimit, limits: prlimitArgs(profile.limits) };
  return profile.type === 'limits' ? limitsPlan(c, host) : bubblewrapPlan(c, host);
}

/**
 * What bubblewrap's --die-with-parent and the capability drop give the other profile: no_new_privs (no
 * setuid program, no file capability raises its privileges) and SIGKILL when the gateway dies, crash
 * included (a server left running would keep its user's token, and its pooled uid). The parent death
 * signal fires when the thread that started it ends: Node spawns from its main thread (libuv's uv_spawn,
 * called synchronously by child_process.spawn), which ends only with the gateway. It holds across prlimit's
 * exec and the server's (neither setuid, and no_new_privs forbids it); spawn sets the user before setpriv.
 */
const SETPRIV_ARGS = ['--no-new-privs', '--pdeathsig', 'KILL', '--'];

function limitsPlan(c: Confined, host: HostFacts): LaunchPlan {
  const setpriv = host.systemTool('setpriv');
  if (!setpriv) throw unavailable(c.u.name, 'its sandbox profile limits needs setpriv (util-linux) to set no_new_privs and die with the gateway, and it is not installed');
  const wrap = [...SETPRIV_ARGS, c.prlimit, ...c.limits, '--'];
  return {
    profile: 'limits',
    file: setpriv,
    args: [...wrap, c.program, ...c.args],
    env: c.env,
    cwd: c.workdir,
    uid: c.uid,
    gid: c.gid,
    pooledUser: !c.profile.user && c.uid !== undefined,
    probe: { file: setpriv, args: [...wrap, c.prlimit, '--version'] },
    summary: { sandbox: 'limits', program: c.program, user: c.who, cwd: c.workdir, limits: c.profile.limits },
  };
}

/** Interpreters that run a directory given as their script: node its package (main, index.js), python its __main__.py. */
const RUNS_DIRECTORIES = /^(node|nodejs|bun|python[0-9.]*|pypy[0-9.]*)$/;

/**
 * The arguments that are the program's code: every existing path but a directory (node /app/server.js),
 * judged by where it leads (an npm bin link, data/bin/server) and by where it lies (a link the server
 * could point elsewhere, or one whose target it has yet to write); and an interpreter's script that is a
 * directory (node /app: a package). A directory given to any other program, or after the script, is
 * its data (a filesystem server's root), which may well be writable. An option's own value is judged as
 * the same path given as an operand after the script: `--require=/srv/data/hook.js` (node loads it before
 * its script) passed unchecked, where `--require /srv/data/hook.js` was refused.
 */
function codeArgs(c: Confined, host: HostFacts): Array<{ path: string; real: string; dir: boolean }> {
  const interpreter = [c.program, host.realpath(c.program)].some((p) => RUNS_DIRECTORIES.test(basename(p)));
  const operands = c.args.filter((a) => !a.startsWith('-')).map((a) => resolve(c.cwd, a));
  const values = c.args.filter((a) => a.startsWith('-') && a.includes('=')).map((a) => resolve(c.cwd, a.slice(a.indexOf('=') + 1)));
  return [...operands.map((path, i) => ({ path, script: interpreter && i === 0 })), ...values.map((path) => ({ path, script: false }))].flatMap(({ path, script }) => {
    if (!host.kind(path)) return [];
    const real = host.realpath(path);
    const dir = host.kind(real)?.type === 'dir';
    return !dir || script ? [{ path, real, dir }] : [];
  });
}

/** Refuses declared paths that do not exist, and a program the server could replace or could not see. */
function checkPaths(c: Confined, host: HostFacts, readOnly: string[], writable: string[]): void {
  const { u, program } = c;
  for (const p of [...readOnly, ...writable]) {
    if (!host.kind(p)) throw unavailable(u.name, `sandbox path "${p}" does not exist`);
  }
  checkNested(c, host, readOnly, writable);
  // The program itself must be visible and must not be replaceable by the server it is; nor its code.
  const programReal = host.realpath(program);
  // Its code named by its environment too (NODE_OPTIONS=--require …, PYTHONPATH), or python -m's working directory: run at its next start as a script would be.
  const named = [...envCodePaths(c.env, c.workdir), ...pythonCwdCode([program, programReal], c.args, c.env, c.workdir)].map((e) => ({ ...e, real: host.realpath(e.path) }));
  const code: Array<{ path: string; real: string; dir: boolean; via?: string }> = [{ path: program, real: programReal, dir: false }, ...codeArgs(c, host), ...named];
  for (const w of writable) {
    const wReal = host.realpath(w);
    for (const f of code) {
      const what = `${f.path === program ? 'its command' : 'its code'} ${f.path}${f.real === f.path ? '' : ` (${f.real})`}${f.via ? ` (${f.via})` : ''}`;
      if (within(f.real, wReal) || within(f.path, w)) throw unavailable(u.name, `${what} lies inside the writable path ${w}: the server could replace its own program`);
      if (f.dir && (within(wReal, f.real) || within(w, f.path))) throw unavailable(u.name, `${what} holds the writable path ${w}: the server could replace its own program`);
    }
  }
  const visible = [...SYSTEM_TREES, ...readOnly];
  if (!visible.some((root) => within(programReal, host.realpath(root)) || within(program, root))) {
    throw unavailable(u.name, `its command ${program} is outside the sandbox: add its directory to sandbox.readOnly`);
  }
}

/**
 * A declared path inside a writable host folder is the server's to replace, by a link (../../../etc), and
 * bubblewrap follows links when it binds the path at the next start: the host's /etc, or its whole root,
 * in the sandbox. Private tmpfs writable paths (writableSizeMb) leave the host folder out of its reach.
 */
function checkNested(c: Confined, host: HostFacts, readOnly: string[], writable: string[]): void {
  if (c.profile.writableSizeMb !== undefined) return;
  for (const w of writable) {
    const wReal = host.realpath(w);
    for (const p of [...readOnly, ...writable]) {
      if (p === w || !(within(p, w) || within(host.realpath(p), wReal))) continue;
      throw unavailable(c.u.name, `sandbox path ${p} lies inside the writable path ${w}: the server could replace it with a link to any host folder`);
    }
  }
}

/** The mounts of the declared paths, parents before children so a folder inside another is mounted over it. */
function declaredMounts(profile: SandboxProfileConfig, readOnly: string[], writable: string[]): string[] {
  // With writableSizeMb a writable path is a size-limited tmpfs of its own: writes never reach the host's disk.
  const size = profile.writableSizeMb === undefined ? undefined : String(profile.writableSizeMb * MiB);
  const mounts = [
    ...readOnly.map((p) => ({ p, args: ['--ro-bind', p, p] })),
    ...writable.map((p) => ({ p, args: size === undefined ? ['--bind', p, p] : ['--size', size, '--tmpfs', p] })),
  ];
  return mounts.sort((a, b) => a.p.length - b.p.length).flatMap((m) => m.args);
}

function bubblewrapPlan(c: Confined, host: HostFacts): LaunchPlan {
  const { u, profile, workdir } = c;
  const bwrap = host.systemTool('bwrap');
  if (!bwrap) throw unavailable(u.name, 'its sandbox profile needs bubblewrap (bwrap), which is not installed (apt-get install bubblewrap); where user namespaces are unavailable use `sandbox: { type: limits }`, or write `sandbox: none` to run it unconfined');
  const readOnly = profile.readOnly.map((p) => resolve(c.cwd, p));
  const writable = profile.writable.map((p) => resolve(c.cwd, p));
  checkPaths(c, host, readOnly, writable);

  const args = ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'sandbox'];
  if (profile.network) args.push('--share-net');
  for (const tree of SYSTEM_TREES) {
    const k = host.kind(tree);
    if (k?.type === 'symlink') args.push('--symlink', k.target!, tree);
    else if (k?.type === 'dir') args.push('--ro-bind', tree, tree);
  }
  for (const f of [...ETC_FILES, ...(profile.network ? ETC_NETWORK : [])]) args.push('--ro-bind-try', `/etc/${f}`, `/etc/${f}`);
  // /dev/shm is a tmpfs of its own (half the host's memory by default): the same size limit as /tmp.
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(profile.tmpSizeMb * MiB), '--tmpfs', '/dev/shm', '--size', String(profile.tmpSizeMb * MiB), '--tmpfs', '/tmp');
  args.push(...declaredMounts(profile, readOnly, writable));
  // A configured working directory exists in the sandbox even when nothing of it is shared: relative
  // paths in the command line then resolve as they would outside, to the declared paths only.
  if (workdir !== '/tmp' && ![...readOnly, ...writable].some((p) => within(workdir, p))) args.push('--dir', workdir);
  args.push('--chdir', workdir);
  // bubblewrap's own root is a tmpfs without a size limit: read-only, or writing to it would fill memory.
  // Likewise /dev (bubblewrap's is a writable tmpfs).
  args.push('--remount-ro', '/dev', '--remount-ro', '/');
  const env = loaderVariablesInside(c.env, args);
  return {
    profile: 'bubblewrap',
    file: bwrap,
    args: [...args, '--', c.prlimit, ...c.limits, '--', c.program, ...c.args],
    env,
    cwd: undefined, // bwrap changes directory inside the sandbox; the host's cwd may not be readable by its user
    uid: c.uid,
    gid: c.gid,
    pooledUser: !profile.user && c.uid !== undefined,
    probe: { file: bwrap, args: [...args, '--', c.prlimit, ...c.limits, '--', c.prlimit, '--version'] },
    summary: { sandbox: 'bubblewrap', program: c.program, user: c.who, cwd: workdir, network: profile.network === true, readOnly, writable, writableSizeMb: profile.writableSizeMb, tmpSizeMb: profile.tmpSizeMb, limits: profile.limits },
  };
}

/** What the dynamic loader (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT…) and glibc's iconv (GCONV_PATH) load code by. */
const LOADER_VARIABLE = /^(LD_|GCONV_PATH$)/;

/**
 * The server's environment, less what would make bwrap itself load code: bwrap runs on the host, outside
 * every namespace it makes, and a declared LD_PRELOAD naming a path the server may write (a writable
 * bind) would have the server's own file loaded there at its next start. Such variables are set inside
 * instead (`--setenv`, pushed onto `args`), where the server meant them to be; their values (paths, not
 * secrets) are then on bwrap's command line, which the rest of the environment never is.
 */
function loaderVariablesInside(env: Record<string, string>, args: string[]): Record<string, string> {
  const outside: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (LOADER_VARIABLE.test(k)) args.push('--setenv', k, v);
    else outside[k] = v;
  }
  return outside;
}
