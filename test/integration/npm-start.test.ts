// `npm start` as the quick start runs it, stopped as a supervisor stops it: a signal to npm (docker stop
// on `CMD npm start`, `timeout`, a process manager), which npm forwards to its script's process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { listeningAddress } from '../helpers/processes.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
let group: number | undefined;

after(() => {
  // npm leads a process group of its own: whatever it left running is ended with it.
  if (group !== undefined) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // gone already
    }
  }
});

describe('npm start', { timeout: 240_000 }, () => {
  it('SIGTERM to npm reaches the gateway: it drains, stops and its port closes', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SWITCHBOARD_PORT: '0', SWITCHBOARD_METRICS_PORT: '0', LOG_LEVEL: 'info' };
    delete env.SWITCHBOARD_CONFIG;
    const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    group = npm.pid;
    let log = '';
    npm.stdout!.on('data', (b: Buffer) => (log += b.toString()));
    npm.stderr!.on('data', (b: Buffer) => (log += b.toString()));
    // The first start may build dist/ (10-30 s; longer on a busy machine).
    const base = (await listeningAddress(npm, 200_000)).replace('localhost', '127.0.0.1');
    assert.equal((await fetch(new URL('/healthz', base))).status, 200);
    const exited = new Promise((r) => npm.once('exit', r));
    npm.kill('SIGTERM');
    await exited;
    // Bounded: the gateway stops within a few seconds of the signal (no call is in flight).
    let listening = true;
    for (let i = 0; i < 100 && (listening || !log.includes('"msg":"stopped"')); i++) {
      listening = await fetch(new URL('/healthz', base)).then(() => true, () => false);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(listening, false, `the gateway outlived npm and still listens on ${base}`);
    assert.match(log, /"signal":"SIGTERM".*"msg":"stopped"/, log.slice(-2000));
  });
});
