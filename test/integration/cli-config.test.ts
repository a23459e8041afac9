// The CLI's check-config and serve (split from cli.test.ts: one file of every CLI test ran close to the
// runner's 180 s per file on a loaded machine).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, runCli, sseMessages, tempConfig } from '../helpers/cli.js';
import { listeningAddress } from '../helpers/processes.js';

describe('switchboard CLI: check-config and serve', () => {
  it('check-config given several files (a shell glob) refuses rather than check the first alone and say ok', () => {
    const bad = tempConfig('upstreams: []\n');
    const r = runCli(['check-config', join(ROOT, 'deploy', 'quickstart.yaml'), bad]);
    assert.equal(r.status, 2, r.stdout);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /one FILE at a time/);
  });

  it('serve given two config files refuses rather than serve the first and say nothing of the second (found by a review)', () => {
    const r = runCli(['serve', join(ROOT, 'deploy', 'quickstart.yaml'), tempConfig('upstreams: []\n')]);
    assert.equal(r.status, 2, r.stdout);
    assert.match(r.stderr, /one config file \(got 2\)/);
  });

  it('an option the command does not take is refused, not ignored (found by a review)', () => {
    // `pins approve --all --upstream github` approved every upstream's pending definitions: --upstream is links', not pins'.
    const pins = runCli(['pins', 'approve', '--all', '--upstream', 'github', '--config', 'deploy/quickstart.yaml']);
    assert.equal(pins.status, 2, pins.stdout);
    assert.match(pins.stderr, /switchboard pins: --upstream is not an option of this command/);
    const check = runCli(['check-config', 'deploy/quickstart.yaml', '--tenant', 'x']);
    assert.equal(check.status, 2, check.stdout);
    assert.match(check.stderr, /switchboard check-config: --tenant is not an option of this command/);
    const tools = runCli(['tools', '--config', 'deploy/quickstart.yaml', '--sub', 'alice']);
    assert.equal(tools.status, 2, tools.stdout);
    assert.match(tools.stderr, /--sub is not an option/);
  });

  it('an argument the command does not take is refused, not ignored (found by a review)', () => {
    // `--scope read write`: "write" was dropped, and the token printed (exit 0) carried the scope "read" alone.
    const token = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--scope', 'read', 'write']);
    assert.equal(token.status, 2, token.stdout);
    assert.equal(token.stdout, '');
    assert.match(token.stderr, /^switchboard token: "write" is not an argument of this command/);
    // A shell glob: the first file's tools were printed, nothing said of the second.
    const tools = runCli(['tools', '--config', 'deploy/quickstart.yaml', tempConfig('upstreams: []\n')]);
    assert.equal(tools.status, 2, tools.stdout);
    assert.match(tools.stderr, /^switchboard tools: ".*config\.yaml" is not an argument of this command/);
    for (const args of [['pins', 'list', 'github'], ['links', 'revoke', '--sub', 'alice', '--upstream', 'github', 'bob']]) {
      const r = runCli(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /is not an argument of this command/);
    }
  });

  it('help asked for, before or after a command, is the usage on stdout and exit 0 (found by a review)', () => {
    // `token --help` was "Unknown option '--help'", exit 2; `-h` exit 2; the usage went to stderr, so
    // `switchboard --help | less` showed nothing.
    for (const args of [['--help'], ['-h'], ['help'], ['token', '--help'], ['serve', '-h'], ['pins', 'approve', '--help']]) {
      const r = runCli(args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^usage:\n {2}switchboard serve/, args.join(' '));
      assert.equal(r.stderr, '', args.join(' '));
    }
    // A mistake still prints the usage on stderr, exit 2.
    const wrong = runCli(['bogus']);
    assert.equal(wrong.status, 2);
    assert.equal(wrong.stdout, '');
    assert.match(wrong.stderr, /^usage:/);
  });

  it('check-config accepts the quick-start config', () => {
    const r = runCli(['check-config', 'deploy/quickstart.yaml']);
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
    const r = runCli(['check-config', file]);
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
    const r = runCli(['check-config', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /upstreams\[0\]\.env\.TOKEN: environment variable SWB_TEST_SURELY_UNSET is not set/);
  });

  it('check-config and serve stop on a missing auth.keys file with the same one-line problem, no stack trace', () => {
    const file = tempConfig(`
auth: { mode: jwt, issuer: "https://idp.example", keys: [./keys/missing.jwk.json], algorithms: [EdDSA] }
tenants: [{ name: dev, endpoints: ["*"] }]
upstreams: [{ name: a, transport: stdio, command: node }]
endpoints: [{ path: /mcp, upstreams: [a] }]
`);
    const expected = `auth.keys[0]: ${join(dirname(file), 'keys', 'missing.jwk.json')} does not exist (a relative path is relative to the config file's directory)`;
    const checked = runCli(['check-config', file]);
    const served = runCli(['serve', '--config', file], { SWITCHBOARD_PORT: '0', SWITCHBOARD_METRICS_PORT: '0' });
    for (const r of [checked, served]) {
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stderr, `switchboard: invalid configuration in ${file}:\n  - ${expected}\n`);
    }
  });

  it('check-config refuses a URL scheme a remote transport cannot use, and serve refuses it alike', () => {
    const file = tempConfig(`
upstreams: [{ name: files, transport: streamable-http, url: "ftp://files.example/mcp" }]
endpoints: [{ path: /mcp, upstreams: [files] }]
`);
    for (const r of [runCli(['check-config', file]), runCli(['serve', '--config', file], { SWITCHBOARD_PORT: '0' })]) {
      assert.equal(r.status, 1);
      assert.match(r.stderr, /upstreams\[0\]\.url: the streamable-http transport cannot use ftp:\/\/ URLs; it needs http:\/\/ or https:\/\//);
      assert.doesNotMatch(r.stderr, /^\s+at /m);
    }
  });

  it('check-config warns about a non-URL issuer and a missing program, and still exits 0', () => {
    const file = tempConfig(`
server: { publicUrl: "https://mcp.example" }
auth: { mode: jwt, issuer: my-gateway, keys: [${join(ROOT, 'deploy', 'dev-keys', 'dev-public.jwk.json')}], algorithms: [EdDSA] }
tenants: [{ name: dev, endpoints: ["*"] }]
upstreams: [{ name: a, transport: stdio, sandbox: none, command: node, args: [./server.mjs] }]
endpoints: [{ path: /mcp, upstreams: [a] }]
`);
    const r = runCli(['check-config', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /: ok \(1 upstreams, 1 endpoints\), with 3 warnings above\n$/);
    const warnings = r.stderr.trim().split('\n');
    assert.equal(warnings.length, 3, r.stderr);
    assert.match(warnings[0]!, /: warning: auth\.issuer: "my-gateway" is not a URL/);
    assert.match(warnings[1]!, /: warning: upstreams\[0\]\.args\[0\]: .*server\.mjs \("\.\/server\.mjs", relative to the config file's directory\) does not exist/);
    assert.match(warnings[2]!, /: warning: auth\.keys trusts the published development key .* and its server\.publicUrl is https:\/\/mcp\.example: /);
  });

  it('check-config warns, as serve does, when the published development key is trusted beyond loopback (found by a review)', () => {
    // serve wrote a warn line and set switchboard_auth_development_key_exposed; check-config said plain "ok".
    const dev = join(ROOT, 'deploy', 'dev-keys', 'dev-public.jwk.json');
    const rest = `auth: { mode: jwt, issuer: "https://idp.example", keys: [${dev}], algorithms: [EdDSA] }\ntenants: [{ name: dev, endpoints: ["*"] }]\nupstreams: [{ name: a, transport: stdio, command: node }]\nendpoints: [{ path: /mcp, upstreams: [a] }]\n`;
    const file = tempConfig(`server: { publicUrl: "https://mcp.example" }\n${rest}`);
    const r = runCli(['check-config', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /: ok \(1 upstreams, 1 endpoints\), with 1 warning above\n$/);
    assert.equal(
      r.stderr,
      `${file}: warning: auth.keys trusts the published development key (${dev}: kid switchboard-dev-1 of deploy/dev-keys, whose private half ships with Switchboard) and its server.publicUrl is https://mcp.example: anyone can sign tokens this gateway accepts, for any tenant and scope, the admin scope included; use your identity provider's keys (auth.jwksUrl, or its public keys in auth.keys)\n`,
    );
    // On loopback (the quick start) nothing is said, as serve says nothing.
    const local = runCli(['check-config', tempConfig(`server: { host: 127.0.0.1, publicUrl: "http://127.0.0.1:8080" }\n${rest}`)]);
    assert.equal(local.status, 0, local.stderr);
    assert.equal(local.stderr, '');
  });

  it('check-config says a Docker Compose file or a Kubernetes manifest is not a gateway config', () => {
    const compose = runCli(['check-config', join(ROOT, 'deploy', 'docker-compose.yaml')]);
    assert.equal(compose.status, 1);
    assert.match(compose.stderr, /invalid configuration in .*docker-compose\.yaml:\n {2}- this is a Docker Compose file \(it has "services"\), not a Switchboard gateway config; pass the gateway config it mounts[^\n]*\n$/);
    const manifest = runCli(['check-config', join(ROOT, 'deploy', 'kubernetes', 'configmap.yaml')]);
    assert.equal(manifest.status, 1);
    assert.match(manifest.stderr, /\n {2}- this file is a Kubernetes manifest \(kind: ConfigMap\), not a Switchboard gateway config; the text of data\["config\.yaml"\] is one[^\n]*\n$/);
  });

  it('serve with a bad config exits non-zero before listening', () => {
    const file = tempConfig('upstreams: []\nendpoints: []\n');
    const r = runCli(['serve', '--config', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /invalid configuration/);
  });

  it('serve refuses a pins file it cannot read, rather than trust every tool on first sight', () => {
    const file = tempConfig(`server: { host: 127.0.0.1, port: 0 }\nmetrics: { enabled: false }\nupstreams:\n  - { name: a, transport: stdio, sandbox: none, command: node, args: [${join(ROOT, 'test', 'fixtures', 'conformance-server.mjs')}] }\nendpoints: [{ path: /mcp, upstreams: [a] }]\npinning: { file: ./pins.json }\n`);
    writeFileSync(join(dirname(file), 'pins.json'), '{"version": 1, "upstreams": {"a": ');
    const r = runCli(['serve', '--config', file]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /pinning\.file: pins file .*pins\.json is not valid JSON.*repair it, or move it away/);
    // check-config makes the same checks as serve: it passed this file (exit 0) that serve then refused.
    const check = runCli(['check-config', file]);
    assert.equal(check.status, 1, check.stdout);
    assert.match(check.stderr, /\n {2}- pinning\.file: pins file .*pins\.json is not valid JSON.*repair it, or move it away/);
    writeFileSync(join(dirname(file), 'pins.json'), '{"version": 1, "upstreams": {}}\n');
    assert.equal(runCli(['check-config', file]).status, 0);
  });

  it('serve on an address it cannot listen on says so in one line (which address, what went wrong, which key) and exits 1', async () => {
    // Each listener: the MCP port, the metrics port, the admin port, held by this test.
    const held = createServer();
    await new Promise<void>((r) => held.listen(0, '127.0.0.1', () => r()));
    const port = (held.address() as AddressInfo).port;
    try {
      const upstream = `upstreams:\n  - { name: a, transport: stdio, sandbox: none, command: node, args: [${join(ROOT, 'test', 'fixtures', 'conformance-server.mjs')}] }\nendpoints: [{ path: /mcp, upstreams: [a] }]\n`;
      for (const [yaml, key] of [
        [`server: { host: 127.0.0.1, port: ${port} }\nmetrics: { enabled: false }\n`, 'server.port'],
        [`server: { host: 127.0.0.1, port: 0 }\nmetrics: { enabled: true, host: 127.0.0.1, port: ${port} }\n`, 'metrics.port'],
        [`server: { host: 127.0.0.1, port: 0 }\nmetrics: { enabled: false }\nadmin: { enabled: true, host: 127.0.0.1, port: ${port} }\n`, 'admin.port'],
      ] as const) {
        const r = runCli(['serve', '--config', tempConfig(yaml + upstream)]);
        assert.equal(r.status, 1, r.stderr);
        assert.equal(r.stderr, `switchboard: cannot listen on 127.0.0.1:${port}: address already in use (${key})\n`);
      }
    } finally {
      await new Promise((r) => held.close(r));
    }
  });

  it('serve without a config explains how to pass one', () => {
    const r = runCli(['serve'], { SWITCHBOARD_CONFIG: '' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--config FILE or set SWITCHBOARD_CONFIG/);
  });

  it('serve runs the quick start from another directory: its relative paths resolve against the config file', async () => {
    // Started the way a user does from anywhere: an absolute config path, a working directory with no
    // node_modules; the upstream's "../node_modules/…" argument must still find server-everything.
    const elsewhere = mkdtempSync(join(tmpdir(), 'swb-cwd-'));
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'main.ts'), 'serve', '--config', join(ROOT, 'deploy', 'quickstart.yaml')], {
      cwd: elsewhere,
      env: { ...process.env, SWITCHBOARD_PORT: '0', SWITCHBOARD_METRICS_PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (b: Buffer) => (log += b.toString()));
    // Up when it listens (the quick start's warm spare included: slow on a loaded machine); a child that
    // never got there is only killed, so its start-up failure is what the test reports.
    let listening = false;
    try {
      const address = await listeningAddress(child, 60_000);
      listening = true;
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const post = (body: object, extra: Record<string, string> = {}) => fetch(`${address}/mcp`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
      // Auth is on in the quick start: without a token, 401 and a pointer to the metadata.
      const refused = await post(init);
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:8080\/\.well-known\/oauth-protected-resource\/mcp"/);
      const token = runCli(['token', '--tenant', 'dev', '--sub', 'readme-user']);
      assert.equal(token.status, 0, token.stderr);
      headers.authorization = `Bearer ${token.stdout.trim()}`;
      const res = await post(init);
      assert.equal(res.status, 200);
      const session = res.headers.get('mcp-session-id');
      assert.ok(session);
      await res.text();
      const sh = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
      assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sh)).status, 202);
      const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'from elsewhere' } } }, sh);
      assert.equal(call.status, 200);
      // responseMode auto: a quick answer is one JSON body, a slower one an SSE stream.
      const body = await call.text();
      const messages = call.headers.get('content-type')?.startsWith('application/json') ? [JSON.parse(body) as Record<string, unknown>] : sseMessages(body);
      const answer = messages.find((m) => m.id === 2) as { result?: { content: Array<{ text: string }> } } | undefined;
      assert.equal(answer?.result?.content[0]?.text, 'Echo: from elsewhere');
    } finally {
      const code = await new Promise<number | null>((resolve) => {
        child.once('exit', (c) => resolve(c));
        child.kill('SIGTERM');
      });
      if (listening) {
        assert.equal(code, 0);
        // Every line reached stdout before the exit, the call's audit line and the last one included.
        const lines = log.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; name?: string; signal?: string });
        assert.ok(lines.some((l) => l.msg === 'audit' && l.name === 'echo'), 'the call was audited');
        assert.deepEqual([lines.at(-1)?.msg, lines.at(-1)?.signal], ['stopped', 'SIGTERM']);
      }
    }
  });
});
