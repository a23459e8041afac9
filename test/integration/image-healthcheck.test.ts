// The image's HEALTHCHECK, run as the container runs it, against `serve` started from a config whose
// server.port is not 8080 and without SWITCHBOARD_PORT (found by a review): the check probed
// 127.0.0.1:${SWITCHBOARD_PORT||8080}, so a mounted config with `server.port: 9000` left the container
// unhealthy for good. The command is taken from the Dockerfile, with the environment the image sets
// (SWITCHBOARD_ADDRESS_FILE pointed at a folder of this test's own). Real gateway process, real sockets.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FIXTURE } from '../helpers/gateway.js';
import { listeningAddress, runToExit } from '../helpers/processes.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The Dockerfile's HEALTHCHECK command (exec form) and the ENV lines the image sets, continuation lines joined. */
function imageHealthcheck(): { argv: string[]; env: Record<string, string> } {
  const code = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const argv = JSON.parse(/^HEALTHCHECK .*?CMD (\[.*\])$/m.exec(code)![1]!) as string[];
  const env = Object.fromEntries([...code.matchAll(/^ENV (\w+)=(\S*)$/gm)].map((m) => [m[1]!, m[2]!]));
  return { argv, env };
}

/** A connection to the MCP port that made one request the front door let through (a ping without a session: 400), kept open. */
function hold(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    socket.on('error', () => {});
    socket.once('error', reject);
    socket.once('data', () => resolve(socket));
    socket.once('close', () => reject(new Error('the MCP listener closed a connection below its cap')));
    socket.once('connect', () =>
      socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
    );
  });
}

/** switchboard_connections_refused_total{reason="max_connections"} as the metrics listener reports it. */
async function refusedAtCap(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return Number(/^switchboard_connections_refused_total\{reason="max_connections"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

describe("the image's HEALTHCHECK", () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-healthcheck-'));
  let child: ChildProcess | undefined;
  after(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('probes the port and host the config chose, and fails once the gateway is gone', { timeout: 60_000 }, async () => {
    const { argv, env: imageEnv } = imageHealthcheck();
    assert.equal(argv[0], 'node');
    const file = join(dir, 'switchboard.yaml');
    // Port 0: wherever the system puts it, never the 8080 a guess would try.
    writeFileSync(file, JSON.stringify({
      server: { host: '0.0.0.0', port: 0 },
      metrics: { enabled: false },
      auth: { mode: 'jwt', issuer: 'https://idp.test', keys: [join(ROOT, 'deploy', 'dev-keys', 'dev-public.jwk.json')], algorithms: ['EdDSA'] },
      tenants: [{ name: 'dev', endpoints: ['*'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, args: [join(ROOT, FIXTURE.args[0]!)] }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    }));
    const { PATH, HOME } = process.env;
    // The image's own variables, but a file it names is put in this test's folder (others run side by side).
    const env = { PATH, HOME, LOG_LEVEL: 'info', ...(imageEnv.SWITCHBOARD_ADDRESS_FILE ? { SWITCHBOARD_ADDRESS_FILE: join(dir, 'address') } : {}) };
    child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts'), 'serve', '--config', file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const address = await listeningAddress(child);
    assert.doesNotMatch(address, /:8080$/);
    const check = () => runToExit(process.execPath, argv.slice(1), { cwd: dir, env, timeoutMs: 20_000 });
    const healthy = await check();
    assert.equal(healthy.code, 0, `the check of a running gateway: ${healthy.out}`);
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    assert.equal((await check()).code, 1, 'the check of a stopped gateway fails');
  });
  // Docker Swarm (and autoheal) replace a container its HEALTHCHECK calls unhealthy. The check asked /healthz
  // on the MCP port, which closes new connections at accept once server.maxConnections are open (SSE streams,
  // a flood): on the image's Node 22 the check failed (UND_ERR_SOCKET), and a healthy gateway at its cap was
  // replaced with every session. The metrics listener answers /healthz too, with a port and a cap of its own.
  it('asks the metrics listener, so a gateway held at server.maxConnections stays healthy', { timeout: 60_000 }, async () => {
    const { argv, env: imageEnv } = imageHealthcheck();
    const file = join(dir, 'capped.yaml');
    writeFileSync(file, JSON.stringify({
      server: { host: '127.0.0.1', port: 0, maxConnections: 4, maxUnauthenticatedConnections: 2, keepAliveMs: 120_000 },
      metrics: { host: '127.0.0.1', port: 0 },
      auth: { mode: 'none' },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, args: [join(ROOT, FIXTURE.args[0]!)] }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    }));
    const { PATH, HOME } = process.env;
    const env = { PATH, HOME, LOG_LEVEL: 'info', ...(imageEnv.SWITCHBOARD_ADDRESS_FILE ? { SWITCHBOARD_ADDRESS_FILE: join(dir, 'capped-address') } : {}) };
    const capped = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts'), 'serve', '--config', file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    capped.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    const held: Socket[] = [];
    try {
      const port = Number(new URL(await listeningAddress(capped)).port);
      const metricsUrl = /"metrics":"(http:[^"]+)"/.exec(out)?.[1];
      assert.ok(metricsUrl, 'the metrics endpoint is logged before the MCP listener');
      for (let i = 0; i < 4; i++) held.push(await hold(port));
      const before = await refusedAtCap(metricsUrl);
      const r = await runToExit(process.execPath, argv.slice(1), { cwd: dir, env, timeoutMs: 20_000 });
      assert.equal(r.code, 0, `the check of a gateway at its connection cap: ${r.out}`);
      assert.equal(await refusedAtCap(metricsUrl), before, 'the check did not knock at the full MCP listener');
      assert.ok(held.every((s) => !s.destroyed), 'the MCP listener was still at its cap');
    } finally {
      for (const s of held) s.destroy();
      const exited = new Promise((r) => capped.once('exit', r));
      capped.kill('SIGTERM');
      await exited;
    }
  });
});
