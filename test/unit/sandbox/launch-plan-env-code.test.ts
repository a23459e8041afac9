// A bubblewrap server's code named by its declared environment rather than its arguments (found by a
// review): NODE_OPTIONS=--require /srv/data/hook.js, LD_PRELOAD, PYTHONPATH or NODE_PATH naming a folder
// it may write (python -m server finds its module there). The server could rewrite that code and have it
// run at its next start (with per-session and tokenEnv, under the next user's token), exactly as a
// script given among the arguments, which is refused. A variable naming read-only code, or a bare
// module name (--require dotenv/config), still starts. Against real files.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import type { StdioUpstreamConfig } from '../../../src/config/schema.js';
import { GatewayError } from '../../../src/errors.js';
import { planLaunch } from '../../../src/sandbox/launch-plan.js';

const POOLED = { uid: 1_900_000_007, gid: 65534 };
const root = mkdtempSync(join(tmpdir(), 'swb-env-code-'));
after(() => rmSync(root, { recursive: true, force: true }));

const code = join(root, 'code'); // read-only: the server's own code
const data = join(root, 'data'); // writable
for (const d of [code, join(data, 'lib')]) mkdirSync(d, { recursive: true });
writeFileSync(join(code, 'server.js'), 'setInterval(() => {}, 1000);\n');
writeFileSync(join(data, 'hook.js'), '\n');

function plan(env: Record<string, string>) {
  const sandbox = { readOnly: [dirname(process.execPath), code], writable: [data] };
  const u = parseConfig({ upstreams: [{ name: 'srv', transport: 'stdio', command: process.execPath, args: [join(code, 'server.js')], env, sandbox }], endpoints: [{ path: '/mcp', upstreams: ['srv'] }] }, 'test', {}, root).upstreams[0] as StdioUpstreamConfig;
  return planLaunch(u, undefined, POOLED);
}
const refused = (env: Record<string, string>, pattern: RegExp) =>
  assert.throws(() => plan(env), (err: unknown) => err instanceof GatewayError && err.code === 'SWB_SANDBOX_UNAVAILABLE' && pattern.test(err.message), `${JSON.stringify(env)} was not refused`);

describe('code named by a declared variable, inside a writable path', () => {
  it('NODE_OPTIONS --require / --import / -r, in either form', () => {
    refused({ NODE_OPTIONS: `--require ${join(data, 'hook.js')}` }, /its code .*hook\.js \(NODE_OPTIONS\) lies inside the writable path/);
    refused({ NODE_OPTIONS: `--enable-source-maps --import=${join(data, 'hook.js')}` }, /hook\.js \(NODE_OPTIONS\) lies inside the writable path/);
    refused({ NODE_OPTIONS: `-r ${join(data, 'later.js')}` }, /later\.js \(NODE_OPTIONS\) lies inside the writable path/);
  });

  it('LD_PRELOAD, and a library or module search path (LD_LIBRARY_PATH, PYTHONPATH, NODE_PATH)', () => {
    refused({ LD_PRELOAD: join(data, 'evil.so') }, /evil\.so \(LD_PRELOAD\) lies inside the writable path/);
    refused({ LD_LIBRARY_PATH: `/usr/lib:${join(data, 'lib')}` }, /data\/lib \(LD_LIBRARY_PATH\) lies inside the writable path/);
    refused({ PYTHONPATH: join(data, 'lib') }, /\(PYTHONPATH\) lies inside the writable path/);
    refused({ NODE_PATH: `${code}:${join(data, 'node_modules')}` }, /data\/node_modules \(NODE_PATH\) lies inside the writable path/);
  });

  it('starts with such variables naming read-only code, a bare module name, or nothing of the kind', () => {
    assert.equal(plan({ NODE_OPTIONS: `--require ${join(code, 'server.js')} --max-old-space-size=64` }).profile, 'bubblewrap');
    assert.equal(plan({ NODE_OPTIONS: '--require dotenv/config', PYTHONPATH: code, LD_LIBRARY_PATH: '/usr/lib' }).profile, 'bubblewrap');
    // A search path holding the writable folder: only a module named "data" would be looked for in it.
    assert.equal(plan({ NODE_PATH: root, PYTHONPATH: root }).profile, 'bubblewrap');
    assert.equal(plan({ DATA_DIR: data }).profile, 'bubblewrap');
  });
});

// python -m and -c put the working directory first on sys.path (a script puts its own folder there): a
// configured cwd inside a writable path let the server leave a module there (server.py, or a json.py
// that shadows the standard library), run at its next start (found by a review).
describe("a python server's working directory inside a writable path, run as a module", () => {
  const python = join(code, 'python3');
  symlinkSync(process.execPath, python);
  const planIn = (cwd: string, args: string[], env: Record<string, string> = {}) => {
    const sandbox = { readOnly: [dirname(process.execPath), code], writable: [data] };
    const u = parseConfig({ upstreams: [{ name: 'py', transport: 'stdio', command: python, args, cwd, env, sandbox }], endpoints: [{ path: '/mcp', upstreams: ['py'] }] }, 'test', {}, root).upstreams[0] as StdioUpstreamConfig;
    return planLaunch(u, undefined, POOLED);
  };

  it('is refused with -m or -c', () => {
    for (const args of [['-m', 'server'], ['-u', '-c', 'import server']]) {
      assert.throws(() => planIn(join(data, 'lib'), args), (err: unknown) => err instanceof GatewayError && /its code .*data\/lib \(its working directory, on sys\.path\) lies inside the writable path/.test(err.message), args.join(' '));
    }
  });

  it('starts with a script (its own folder goes on sys.path), with -P or PYTHONSAFEPATH, or in a read-only cwd', () => {
    assert.equal(planIn(join(data, 'lib'), [join(code, 'server.js')]).profile, 'bubblewrap');
    assert.equal(planIn(join(data, 'lib'), ['-P', '-m', 'server']).profile, 'bubblewrap');
    assert.equal(planIn(join(data, 'lib'), ['-m', 'server'], { PYTHONSAFEPATH: '1' }).profile, 'bubblewrap');
    assert.equal(planIn(code, ['-m', 'server']).profile, 'bubblewrap');
  });
});
