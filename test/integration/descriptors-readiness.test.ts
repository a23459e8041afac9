// /readyz while the process runs out of file descriptors: a gateway under `ulimit -n 160` whose
// server.maxConnections (1000) is configured above what it can hold (and whose silent connections are
// kept a minute, so that they add up), filled with idle connections until /readyz says it should not be
// sent new clients, then emptied again. Node 20 and later are never told
// of an accept that failed for want of descriptors (see src/edge/descriptor-watch.ts), so this is what
// the count of descriptors is for.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FIXTURE } from '../helpers/gateway.js';
import { listeningAddress } from '../helpers/processes.js';

const LIMIT = 160;

async function readyz(base: string): Promise<{ status: number; body: string }> {
  const res = await fetch(new URL('/readyz', base), { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.text() };
}

function open(port: number): Promise<Socket | undefined> {
  return new Promise((done) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => done(s));
    s.once('error', () => done(undefined));
  });
}

describe('/readyz as descriptors run out', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-fds-'));
  const sockets: Socket[] = [];
  let child: ChildProcess | undefined;
  after(() => {
    for (const s of sockets) s.destroy();
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 naming the descriptors once a few are left, and 200 again once they are free', async () => {
    const file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `server: { host: 127.0.0.1, port: 0, maxConnections: 1000, headersTimeoutMs: 60000, bodyTimeoutMs: 60000 }
metrics: { enabled: false }
auth: { mode: none }
upstreams: [{ name: fixture, transport: stdio, sandbox: none, sharing: shared, command: ${FIXTURE.command}, args: [${resolve(FIXTURE.args[0]!)}] }]
endpoints: [{ path: /mcp, upstreams: [fixture] }]
`,
    );
    child = spawn('bash', ['-c', `ulimit -n ${LIMIT} && exec "${process.execPath}" --import tsx src/main.ts serve --config "${file}"`], { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.resume();
    const base = await listeningAddress(child, 60_000);
    const port = Number(new URL(base).port);
    // Ready once its upstream is (listening comes first: on a loaded machine the fixture takes a while).
    let first = await readyz(base);
    for (let i = 0; i < 120 && first.status !== 200; i++) {
      await sleep(500);
      first = await readyz(base);
    }
    assert.equal(first.status, 200, first.body);

    // Idle connections, ten at a time, until /readyz turns (bounded: never more than the limit).
    let last = await readyz(base);
    while (last.status === 200 && sockets.length < LIMIT) {
      for (let i = 0; i < 10; i++) {
        const s = await open(port);
        if (s) sockets.push(s);
      }
      await sleep(1100); // a count is reused for a second
      last = await readyz(base);
    }
    assert.equal(last.status, 503, `after ${sockets.length} connections: ${last.body}`);
    assert.match(JSON.parse(last.body).status, /^not ready: \d+ of at most 160 file descriptors open$/);

    for (const s of sockets.splice(0)) s.destroy();
    let again = last;
    for (let i = 0; i < 30 && again.status !== 200; i++) {
      await sleep(500);
      again = await readyz(base);
    }
    assert.equal(again.status, 200, again.body);
  });
});
