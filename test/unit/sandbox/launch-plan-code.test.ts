// The program's code must not lie where the server it is can write: it could replace it, and its
// code would run at the next start (with per-session and tokenEnv, under another user's token).
// Against real files: symlinks and directories as npm and Python lay them out.
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
const root = mkdtempSync(join(tmpdir(), 'swb-code-'));
after(() => rmSync(root, { recursive: true, force: true }));

const code = join(root, 'code'); // read-only: the server's own code
const data = join(root, 'data'); // writable
const app = join(root, 'app'); // read-only, with a writable folder inside
for (const d of [code, join(data, 'bin'), join(app, 'node_modules')]) mkdirSync(d, { recursive: true });
writeFileSync(join(code, 'server.js'), 'setInterval(() => {}, 1000);\n');
writeFileSync(join(data, 'real.js'), 'setInterval(() => {}, 1000);\n');
writeFileSync(join(data, 'package.json'), '{ "main": "real.js" }\n');
writeFileSync(join(app, 'index.js'), 'setInterval(() => {}, 1000);\n');
symlinkSync('../real.js', join(data, 'bin', 'server')); // npm's bin link
symlinkSync('../data/real.js', join(code, 'link.js')); // a read-only link to writable code
symlinkSync('server.js', join(code, 'alias.js')); // a link that stays in read-only code
symlinkSync('../later.js', join(data, 'bin', 'dangling')); // written by the server, for its next start

function upstream(command: string, args: string[]): StdioUpstreamConfig {
  const sandbox = { readOnly: [dirname(process.execPath), code, app], writable: [data, join(app, 'node_modules')] };
  return parseConfig({ upstreams: [{ name: 'srv', transport: 'stdio', command, args, sandbox }], endpoints: [{ path: '/mcp', upstreams: ['srv'] }] }, 'test', {}, root).upstreams[0] as StdioUpstreamConfig;
}
const plan = (args: string[], command = process.execPath) => planLaunch(upstream(command, args), undefined, POOLED);
const refused = (args: string[], pattern: RegExp) =>
  assert.throws(() => plan(args), (err: unknown) => err instanceof GatewayError && err.code === 'SWB_SANDBOX_UNAVAILABLE' && pattern.test(err.message), `${args.join(' ')} was not refused`);

describe('code inside a writable path is refused, through symlinks and directories', () => {
  it('a file, as before', () => {
    refused([join(data, 'real.js')], /its code .*real\.js lies inside the writable path/);
  });

  it('a symlink inside a writable path (an npm bin link), or one that leads into it', () => {
    refused([join(data, 'bin', 'server')], /its code .*data\/bin\/server .*lies inside the writable path/);
    refused([join(code, 'link.js')], /its code .*code\/link\.js .*data\/real\.js.* lies inside the writable path/);
    refused([join(data, 'bin', 'dangling')], /lies inside the writable path/);
  });

  it("an interpreter's script that is a directory (a package): inside a writable path, or holding one", () => {
    refused([data], /its code .*data lies inside the writable path/);
    refused(['--enable-source-maps', app], /its code .*app holds the writable path .*app\/node_modules/);
  });

  it("an option's own value (--require=file, --import=file): judged as the same file given as an operand is (found by a review)", () => {
    // node loads it before its script: a server that rewrote it ran its code at the next start.
    refused([`--require=${join(data, 'real.js')}`, join(code, 'server.js')], /its code .*real\.js lies inside the writable path/);
    refused([`--import=${join(data, 'bin', 'server')}`, join(code, 'server.js')], /its code .*data\/bin\/server .*lies inside the writable path/);
    // A directory as an option's value is data (a root to serve), as an operand after the script is.
    assert.equal(plan([`--root=${data}`, join(code, 'server.js')]).profile, 'bubblewrap');
    assert.equal(plan([`--require=${join(code, 'server.js')}`, join(code, 'alias.js')]).profile, 'bubblewrap');
  });

  it('allows code outside them, and a writable directory given as data', () => {
    assert.equal(plan([join(code, 'server.js'), data]).profile, 'bubblewrap');
    assert.equal(plan([join(code, 'alias.js')]).profile, 'bubblewrap');
    // Not an interpreter: a directory is what it serves (a filesystem server's root), not its code.
    assert.equal(plan([data, app], '/bin/ls').profile, 'bubblewrap');
  });
});
