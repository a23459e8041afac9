// The CLI as users meet it: the package npm pack makes, installed globally from its tarball, puts
// `switchboard` and `mcp-switchboard` on PATH; they check the shipped configs, sign a development token
// and serve a quick-start-like config from another directory, reached over HTTP.
// Dependencies come through npm's cache (--prefer-offline): after `npm ci` (CI) or any earlier run,
// only package metadata missing from the cache is fetched from the registry.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { listeningAddress, runToExit } from '../helpers/processes.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tmp = mkdtempSync(join(tmpdir(), 'swb-package-'));
const prefix = join(tmp, 'prefix');
const installed = join(prefix, 'lib', 'node_modules', 'mcp-switchboard');
const bin = (name: string) => join(prefix, 'bin', name);

/** The environment without the gateway's overrides, with npm's global prefix pointing into the test's folder. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, npm_config_prefix: prefix, ...extra };
  for (const k of ['SWITCHBOARD_CONFIG', 'SWITCHBOARD_HOST', 'SWITCHBOARD_PORT', 'LOG_LEVEL']) if (!(k in extra)) delete e[k];
  return e;
}

let packed: string[] = [];
let child: ChildProcess | undefined;

before(async () => {
  // dist/ as npm pack's prepack would make it (a clean build is skipped when dist/ is current).
  const build = await runToExit(process.execPath, [join(ROOT, 'scripts', 'ensure-built.mjs')], { cwd: ROOT, env: env(), timeoutMs: 170_000 });
  assert.equal(build.code, 0, build.out);
  const pack = await runToExit('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: ROOT, env: env(), timeoutMs: 60_000 });
  assert.equal(pack.code, 0, pack.out);
  const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packed = info!.files.map((f) => f.path);
  const install = await runToExit('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(tmp, info!.filename)], {
    cwd: tmp,
    env: env(),
    timeoutMs: 150_000,
  });
  assert.equal(install.code, 0, install.out);
}, { timeout: 360_000 });

after(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

describe('the npm package, installed from its tarball', { timeout: 120_000 }, () => {
  it('ships the built CLI, the quick start and its development keys and the examples, not the sources', () => {
    for (const f of ['dist/main.js', 'dist/app.js', 'deploy/quickstart.yaml', 'deploy/dev-keys/dev-public.jwk.json', 'deploy/dev-keys/dev-private.jwk.json', 'deploy/examples/echo-server.mjs', 'package.json', 'README.md']) {
      assert.ok(packed.includes(f), `${f} is in the package`);
    }
    assert.deepEqual(packed.filter((f) => /^(src|test|scripts|helm)\//.test(f) || f.startsWith('deploy/kubernetes/')), []);
  });

  it('puts switchboard and mcp-switchboard on PATH; check-config works from the repository and on the installed quick start', async () => {
    assert.ok(existsSync(bin('switchboard')) && existsSync(bin('mcp-switchboard')));
    const repo = await runToExit(bin('switchboard'), ['check-config', '--config', 'deploy/quickstart.yaml'], { cwd: ROOT, env: env() });
    assert.equal(repo.code, 0, repo.out);
    assert.match(repo.stdout, /^deploy\/quickstart\.yaml: ok \(1 upstreams, 1 endpoints\)/);
    // The package's own copy: valid, but its upstream (server-everything, a devDependency) comes with a clone only.
    const own = await runToExit(bin('mcp-switchboard'), ['check-config', join(installed, 'deploy', 'quickstart.yaml')], { cwd: tmp, env: env() });
    assert.equal(own.code, 0, own.out);
    assert.match(own.stderr, /warning: upstreams\[0\]\.args\[0\]: .*server-everything.* does not exist/);
  });

  it('serves a quick-start-like config from another directory, with a token signed by the installed CLI', async () => {
    // JWT auth with the package's development key, and the package's demo server by a path relative to the config.
    const config = join(tmp, 'gateway.yaml');
    writeFileSync(
      config,
      [
        'server: { host: 127.0.0.1, port: 8080, publicUrl: "http://127.0.0.1:8080" }',
        'metrics: { enabled: false }',
        `auth: { mode: jwt, issuer: "https://switchboard.test", keys: [./prefix/lib/node_modules/mcp-switchboard/deploy/dev-keys/dev-public.jwk.json], algorithms: [EdDSA] }`,
        'tenants: [{ name: dev, endpoints: ["*"] }]',
        `upstreams: [{ name: echo, transport: stdio, sandbox: none, command: ${JSON.stringify(process.execPath)}, args: [./prefix/lib/node_modules/mcp-switchboard/deploy/examples/echo-server.mjs] }]`,
        'endpoints: [{ path: /mcp, upstreams: [echo] }]',
        '',
      ].join('\n'),
    );
    const token = await runToExit(bin('mcp-switchboard'), ['token', '--config', config, '--tenant', 'dev', '--sub', 'installed'], { cwd: tmpdir(), env: env() });
    assert.equal(token.code, 0, token.out);
    const proc = spawn(bin('switchboard'), ['serve', '--config', config], { cwd: tmpdir(), env: env({ SWITCHBOARD_PORT: '0', LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    const base = await listeningAddress(proc, 30_000);
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token.stdout.trim()}` };
    const post = (body: object, extra: Record<string, string> = {}) => fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'package-test', version: '1' } } });
    assert.equal(init.status, 200, await init.clone().text());
    const sh = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
    await init.text();
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sh)).status, 202);
    const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'from the installed package' } } }, sh);
    assert.equal(call.status, 200);
    assert.match(await call.text(), /"text":"from the installed package"/);
    const exited = new Promise<number | null>((done) => proc.once('exit', (code) => done(code)));
    proc.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});
