// The limits profile (prlimit, a pooled user, no bubblewrap) set no no_new_privs, and its servers did not
// die with the gateway: a crashed gateway left them running, with their user's token. A real server,
// started by the real transport factory in a real process standing in for the gateway, killed with SIGKILL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { waitFor } from '../../helpers/wait.js';

const PARENT = join(import.meta.dirname, '..', '..', 'helpers', 'limits-parent.ts');

/** Says its pid and its no_new_privs, then runs on without reading its stdin (its end is no cue to exit). */
const SERVER = `
const nnp = require('fs').readFileSync('/proc/self/status', 'utf8').match(/^NoNewPrivs:\\s*(\\d)/m)[1];
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'seen', params: { pid: process.pid, noNewPrivs: nnp } }) + '\\n');
setInterval(() => {}, 1000);
`;

/** Gone, or a zombie left for whoever reaps it (it no longer runs). */
function gone(pid: number): boolean {
  try {
    return /^State:\s*Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

describe('the limits profile (found by a review)', () => {
  it('runs its server with no_new_privs, and kills it when the gateway dies (SIGKILL, no exit hook)', async () => {
    const upstream = { name: 'orphan', transport: 'stdio', command: process.execPath, args: ['-e', SERVER], sandbox: { type: 'limits' } };
    const gateway = spawn(process.execPath, ['--import', 'tsx', PARENT, JSON.stringify(upstream)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((resolve) => gateway.once('exit', () => resolve()));
    let server: number | undefined;
    try {
      const [line] = await createInterface({ input: gateway.stdout })[Symbol.asyncIterator]().next().then((r) => [r.value as string]);
      const seen = JSON.parse(line!) as { pid: number; noNewPrivs: string };
      server = seen.pid;
      assert.equal(seen.noNewPrivs, '1', 'the server runs without no_new_privs (NoNewPrivs: 0)');
      assert.equal(gone(server), false, 'control: the server runs');
      gateway.kill('SIGKILL');
      await exited;
      assert.equal(await waitFor(() => gone(server!)), true, `the server (pid ${server}) outlived its gateway`);
    } finally {
      gateway.kill('SIGKILL');
      if (server !== undefined && !gone(server)) process.kill(server, 'SIGKILL');
    }
  });
});
