import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const CLI = ['--import', 'tsx', 'src/main.ts'];

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });
}

function tempConfig(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'swb-cli-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, text);
  return file;
}

describe('switchboard CLI', () => {
  it('token prints a JWT for the quick start, and refuses to run without --tenant/--sub', () => {
    const ok = run(['token', '--tenant', 'dev', '--sub', 'me', '--scope', 'a b', '--ttl', '5m']);
    assert.equal(ok.status, 0, ok.stderr);
    const [header, payload] = ok.stdout.trim().split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    assert.equal(header.alg, 'EdDSA');
    assert.equal(payload.iss, 'http://127.0.0.1:8080');
    assert.equal(payload.aud, 'http://127.0.0.1:8080');
    assert.equal(payload.tenant, 'dev');
    assert.equal(payload.sub, 'me');
    assert.equal(payload.scope, 'a b');
    assert.equal(payload.exp - payload.iat, 300);
    const bad = run(['token', '--sub', 'me']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--tenant and --sub are required/);
  });

  it('check-config accepts the quick-start config', () => {
    const r = run(['check-config', 'deploy/quickstart.yaml']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /ok \(1 upstreams, 1 endpoints\)/);
  });

  it('check-config names the path of every bad field and exits non-zero', () => {
    const file = tempConfig(`
server: { port: 99999 }
upstreams:
  - name: Bad_Name
    transport: stdio
    command: node
    sharing: sometimes
endpoints:
  - path: /mcp
    upstreams: [missing]
`);
    const r = run(['check-config', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /server\.port/);
    assert.match(r.stderr, /upstreams\[0\]\.name/);
    assert.match(r.stderr, /upstreams\[0\]\.sharing/);
  });

  it('reports an unset ${VAR} by path', () => {
    const file = tempConfig(`
upstreams:
  - name: a
    transport: stdio
    command: node
    env: { TOKEN: "\${SWB_TEST_SURELY_UNSET}" }
endpoints: [{ path: /mcp, upstreams: [a] }]
`);
    const r = run(['check-config', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /upstreams\[0\]\.env\.TOKEN: environment variable SWB_TEST_SURELY_UNSET is not set/);
  });

  it('serve with a bad config exits non-zero before listening', () => {
    const file = tempConfig('upstreams: []\nendpoints: []\n');
    const r = run(['serve', '--config', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /invalid configuration/);
  });

  it('serve without a config explains how to pass one', () => {
    const r = run(['serve'], { SWITCHBOARD_CONFIG: '' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--config FILE or set SWITCHBOARD_CONFIG/);
  });

  it('serve runs the quick start, answers initialize, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [...CLI, 'serve', '--config', 'deploy/quickstart.yaml'], {
      env: { ...process.env, SWITCHBOARD_PORT: '0', SWITCHBOARD_METRICS_PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const address = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listen line: ${out}`)), 20_000);
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /switchboard listening on (http:\/\/[^"\s]+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } as Record<string, string>,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    };
    // Auth is on in the quick start: without a token, 401 and a pointer to the metadata.
    const refused = await fetch(`${address}/mcp`, init);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:8080\/\.well-known\/oauth-protected-resource\/mcp"/);
    const token = run(['token', '--tenant', 'dev', '--sub', 'readme-user']);
    assert.equal(token.status, 0, token.stderr);
    init.headers.authorization = `Bearer ${token.stdout.trim()}`;
    const res = await fetch(`${address}/mcp`, {
      ...init,
    });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get('mcp-session-id'));
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    assert.equal(code, 0);
  });
});
