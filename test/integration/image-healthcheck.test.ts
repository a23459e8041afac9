// The image's HEALTHCHECK, run as the container runs it, against `serve` started from a config whose
// server.port is not 8080 and without SWITCHBOARD_PORT (found by a review): the check probed
// 127.0.0.1:${SWITCHBOARD_PORT||8080}, so a mounted config with `server.port: 9000` left the container
// unhealthy for good. The command is taken from the Dockerfile, with the environment the image sets
// (SWITCHBOARD_ADDRESS_FILE pointed at a folder of this test's own). Real gateway process, real sockets.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
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
});
