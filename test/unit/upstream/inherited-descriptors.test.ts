// A gateway started with a descriptor open without close-on-exec (a wrapper script's `40<key.pem`, a
// supervisor's notification pipe, a CI runner's) handed it to every stdio server, through bubblewrap too:
// a server read what the descriptor led to, outside its sandbox. A real server, started by the real
// transport factory in a real process standing in for the gateway, given such a descriptor as fd 40.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';

const PARENT = join(import.meta.dirname, '..', '..', 'helpers', 'limits-parent.ts');
const SECRET = `swb-inherited-secret-${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'swb-inherited-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Reads what its fd 40 leads to (from the start) and says it, then runs on. */
const SERVER = `
const fs = require('fs');
let fd40;
try { const b = Buffer.alloc(256); fd40 = b.subarray(0, fs.readSync(40, b, 0, 256, 0)).toString(); } catch (e) { fd40 = e.code; }
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'seen', params: { fd40 } }) + '\\n');
setInterval(() => {}, 1000);
`;

/** A Node that CI installed for a Node line lies outside the system trees bubblewrap shows. */
const NODE_DIR = dirname(process.execPath);
const NODE_MOUNT = ['/usr/', '/bin/'].some((tree) => NODE_DIR.startsWith(tree)) ? [] : [NODE_DIR];

/** What the server found at its fd 40, its gateway started with `secret` open there. */
async function seenAt40(sandbox: Record<string, unknown> | 'none', wrapper = 'exec "$@" 40<"$SECRET_FILE"'): Promise<string> {
  const secret = join(dir, `key-${typeof sandbox === 'string' ? sandbox : String(sandbox.type)}.pem`);
  writeFileSync(secret, SECRET);
  const upstream = { name: 'inherits', transport: 'stdio', command: process.execPath, args: ['-e', SERVER], sandbox };
  // A wrapper script that opens a file for the gateway: the shell opens it without close-on-exec. (Node
  // itself marks the lowest few close-on-exec at its start, so 40, as a supervisor's or a CI runner's.)
  const gateway = spawn('bash', ['-c', wrapper, 'sh', process.execPath, '--import', 'tsx', PARENT, JSON.stringify(upstream)], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, SECRET_FILE: secret } });
  const exited = new Promise<void>((resolve) => gateway.once('exit', () => resolve()));
  try {
    const line = createInterface({ input: gateway.stdout })[Symbol.asyncIterator]().next();
    const { value } = await Promise.race([line, exited.then(() => ({ value: undefined }))]);
    assert.ok(value !== undefined, 'the server never started: its gateway exited');
    return (JSON.parse(value as string) as { fd40: string }).fd40;
  } finally {
    gateway.kill('SIGKILL');
    await exited;
  }
}

describe('descriptors the gateway inherited without close-on-exec (found by a review)', () => {
  it('never reach a server in the bubblewrap sandbox', async () => {
    const seen = await seenAt40({ type: 'bubblewrap', readOnly: NODE_MOUNT });
    assert.doesNotMatch(seen, new RegExp(SECRET), 'the sandboxed server read the file its gateway had open');
    assert.equal(seen, '', 'its fd 40 is /dev/null');
  });

  it('never reach a server in the limits profile', async () => {
    const seen = await seenAt40({ type: 'limits' });
    assert.doesNotMatch(seen, new RegExp(SECRET), 'the server read the file its gateway had open');
    assert.equal(seen, '', 'its fd 40 is /dev/null');
  });

  it('a descriptor past the open-file limit (opened before the limit was lowered) does not stop servers starting', async () => {
    // spawn cannot put /dev/null at 200 under a limit of 160 (every start failed with EINVAL): it is left.
    const seen = await seenAt40('none', 'exec 200<"$SECRET_FILE"; ulimit -n 160; exec "$@"');
    assert.equal(seen, 'EBADF', 'the server started, and has nothing at 40');
  });
});
