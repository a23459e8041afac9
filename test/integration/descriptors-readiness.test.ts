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
import { openRawSocket } from '../helpers/raw-socket.js';
import { until } from '../helpers/wait.js';

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
  after(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A gateway under `ulimit -n LIMIT`, once /readyz says it is ready (its upstream up). */
  async function startLimited(): Promise<{ base: string; port: number }> {
    const file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `server: { host: 127.0.0.1, port: 0, maxConnections: 1000, headersTimeoutMs: 60000, bodyTimeoutMs: 60000, keepAliveMs: 60000 }
metrics: { enabled: false }
auth: { mode: none }
upstreams: [{ name: fixture, transport: stdio, sandbox: none, sharing: shared, command: ${FIXTURE.command}, args: [${resolve(FIXTURE.args[0]!)}] }]
endpoints: [{ path: /mcp, upstreams: [fixture] }]
`,
    );
    child = spawn('bash', ['-c', `ulimit -n ${LIMIT} && exec "${process.execPath}" --import tsx src/main.ts serve --config "${file}"`], { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.resume();
    const base = await listeningAddress(child, 60_000);
    // Ready once its upstream is (listening comes first: on a loaded machine the fixture takes a while).
    let first = await readyz(base);
    for (let i = 0; i < 120 && first.status !== 200; i++) {
      await sleep(500);
      first = await readyz(base);
    }
    assert.equal(first.status, 200, first.body);
    return { base, port: Number(new URL(base).port) };
  }

  async function stop(): Promise<void> {
    for (const s of sockets.splice(0)) s.destroy();
    const c = child;
    child = undefined;
    if (c && c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    }
  }

  it('answers 503 naming the descriptors once a few are left, and 200 again once they are free', async () => {
    const { base, port } = await startLimited();

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
    await stop();
  });

  // Found by a review: the count of descriptors opens one itself (it reads /proc/self/fd), and with none
  // left it failed, which read as "cannot be counted": ready, exactly while the process had none at all.
  // A probe on a connection kept alive (or one whose accept got the last descriptor) was told 200.
  it('answers 503 with every descriptor in use, when they cannot even be counted', async () => {
    const { port } = await startLimited();
    const held = await openRawSocket('127.0.0.1', port);
    const ask = async (): Promise<string> => {
      const from = held.received().length;
      held.socket.write(`GET /readyz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      await until('/readyz answered on the kept connection', () => /\r\n\r\n\{[^}]*\}/.test(held.received().slice(from)) || held.closed());
      return held.received().slice(from);
    };
    assert.match(await ask(), /^HTTP\/1\.1 200 /);
    // More connections than the limit: the gateway takes them until no descriptor is left (the rest wait in
    // the backlog, or are closed at accept).
    for (let i = 0; i < LIMIT; i++) {
      const s = await open(port);
      if (s) sockets.push(s);
    }
    await sleep(1100); // a count is reused for a second
    const answer = await ask();
    assert.match(answer, /^HTTP\/1\.1 503 /, answer);
    assert.match(answer, /"status":"not ready: 160 of at most 160 file descriptors open"/);
    held.socket.destroy();
    await stop();
  });
});
