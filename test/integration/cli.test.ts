import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { listeningAddress } from '../helpers/processes.js';
import { startRedis } from '../helpers/redis.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = ['--import', 'tsx', join(ROOT, 'src', 'main.ts')];

/** The JSON-RPC messages of an SSE body ("data:" lines). */
function sseMessages(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '')
    .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>);
}

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [...CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });
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
    assert.equal(payload.iss, (parseYaml(readFileSync(join(ROOT, 'deploy', 'quickstart.yaml'), 'utf8')) as { auth: { issuer: string } }).auth.issuer);
    assert.equal(payload.aud, 'http://127.0.0.1:8080');
    assert.equal(payload.tenant, 'dev');
    assert.equal(payload.sub, 'me');
    assert.equal(payload.scope, 'a b');
    assert.equal(payload.exp - payload.iat, 300);
    const bad = run(['token', '--sub', 'me']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--tenant and --sub are required/);
  });

  it("token refuses a config whose gateway would not accept its token, and says none is needed with auth off", () => {
    // The image's built-in config: JWT from an identity provider's JWKS, no static key.
    const idp = run(['token', '--tenant', 'default', '--sub', 'me', '--config', join(ROOT, 'deploy', 'examples', 'image-default.yaml')], {
      JWT_ISSUER: 'https://idp.example.com',
      JWT_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
    });
    assert.equal(idp.status, 1, idp.stdout);
    assert.equal(idp.stdout, '');
    assert.match(idp.stderr, /does not trust .*dev-private\.jwk\.json.*auth\.jwksUrl https:\/\/idp\.example\.com\/\.well-known\/jwks\.json/);
    // A static key that is not the signing key's public half, or an algorithm the gateway does not allow.
    const otherKey = join(mkdtempSync(join(tmpdir(), 'swb-cli-')), 'other-public.jwk.json');
    writeFileSync(otherKey, JSON.stringify(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' })));
    const other = tempConfig(`auth: { mode: jwt, issuer: "https://x.example", keys: [${otherKey}] }
tenants: [{ name: dev, endpoints: ["*"] }]
upstreams: [{ name: a, transport: stdio, command: node }]
endpoints: [{ path: /mcp, upstreams: [a] }]
`);
    const wrongKey = run(['token', '--tenant', 'dev', '--sub', 'me', '--config', other]);
    assert.equal(wrongKey.status, 1, wrongKey.stdout);
    assert.match(wrongKey.stderr, /does not trust .*none of auth\.keys/);
    const rs = tempConfig(readFileSync(join(ROOT, 'deploy', 'quickstart.yaml'), 'utf8').replace('algorithms: [EdDSA]', 'algorithms: [RS256]').replaceAll('./dev-keys/', `${join(ROOT, 'deploy', 'dev-keys')}/`));
    const wrongAlg = run(['token', '--tenant', 'dev', '--sub', 'me', '--config', rs]);
    assert.equal(wrongAlg.status, 1, wrongAlg.stdout);
    assert.match(wrongAlg.stderr, /EdDSA.*auth\.algorithms/);
    const open = tempConfig('auth: { mode: none }\nupstreams: [{ name: a, transport: stdio, command: node }]\nendpoints: [{ path: /mcp, upstreams: [a] }]\n');
    const none = run(['token', '--tenant', 'dev', '--sub', 'me', '--config', open]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /no token is needed/);
  });

  it('token with a --key it cannot sign with says why in one line (no stack trace, nothing of the file quoted)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-cli-'));
    const broken = join(dir, 'broken.jwk.json');
    writeFileSync(broken, '{"kty":"OKP","crv":"Ed25519","d":"c2VjcmV0LXNlY3JldA"');
    for (const [key, why] of [
      [join(dir, 'absent.jwk.json'), /does not exist/],
      [broken, /not a JSON Web Key/],
      [join(ROOT, 'deploy', 'dev-keys', 'dev-public.jwk.json'), /private/],
    ] as const) {
      const r = run(['token', '--tenant', 'dev', '--sub', 'me', '--key', key]);
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, why);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /c2Vj|    at /);
    }
  });

  it('token refuses a tenant the config does not have: the gateway would answer every request with 403', () => {
    const r = run(['token', '--tenant', 'deV', '--sub', 'me']);
    assert.equal(r.status, 1, r.stdout);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /no tenant "deV".*\(tenants: dev\)/);
  });

  it('token signs a "typ" that auth.tokenTypes accepts', () => {
    const file = tempConfig(`
auth: { mode: jwt, issuer: "https://idp.example", keys: [${join(ROOT, 'deploy', 'dev-keys', 'dev-public.jwk.json')}], algorithms: [EdDSA], tokenTypes: [JWT] }
tenants: [{ name: dev, endpoints: ["*"] }]
upstreams: [{ name: a, transport: stdio, command: node }]
endpoints: [{ path: /mcp, upstreams: [a] }]
`);
    const r = run(['token', '--tenant', 'dev', '--sub', 'me', '--config', file]);
    assert.equal(r.status, 0, r.stderr);
    // at+jwt, which this gateway refuses ("its typ header is not one of auth.tokenTypes").
    assert.equal(JSON.parse(Buffer.from(r.stdout.split('.')[0]!, 'base64url').toString()).typ, 'JWT');
  });

  it("token puts the tenant and the scopes in the claims the config's auth.claims names", () => {
    const file = tempConfig(`
auth: { mode: jwt, issuer: "https://idp.example", keys: [${join(ROOT, 'deploy', 'dev-keys', 'dev-public.jwk.json')}], algorithms: [EdDSA], claims: { tenant: org_id, scopes: scp } }
tenants: [{ name: dev, endpoints: ["*"] }]
upstreams: [{ name: a, transport: stdio, command: node }]
endpoints: [{ path: /mcp, upstreams: [a] }]
`);
    const r = run(['token', '--tenant', 'dev', '--sub', 'me', '--scope', 'files:read', '--scope', 'files:write', '--config', file]);
    assert.equal(r.status, 0, r.stderr);
    const payload = JSON.parse(Buffer.from(r.stdout.trim().split('.')[1]!, 'base64url').toString());
    assert.equal(payload.org_id, 'dev');
    // The gateway reads scopes from "scp" here: in "scope" the --scope values were no scopes at all.
    assert.equal(payload.scp, 'files:read files:write');
    assert.equal(payload.scope, undefined);
  });

  it('token and pins find their config alike: --config, else SWITCHBOARD_CONFIG, else the quick start', () => {
    const quick = run(['pins', 'list'], { SWITCHBOARD_CONFIG: '' });
    assert.equal(quick.status, 0, quick.stderr);
    assert.match(quick.stderr, /only the config's pins are listed/);
    assert.equal(quick.stdout, 'no tool pins yet\n');
    const file = tempConfig(`
auth: { mode: jwt, issuer: "https://other.example", keys: [${join(ROOT, 'deploy', 'dev-keys', 'dev-public.jwk.json')}], algorithms: [EdDSA] }
tenants: [{ name: dev, endpoints: ["*"] }]
pinning: { file: ./pins.json }
upstreams: [{ name: a, transport: stdio, command: node }]
endpoints: [{ path: /mcp, upstreams: [a] }]
`);
    const fromEnv = run(['pins', 'list'], { SWITCHBOARD_CONFIG: file });
    assert.equal(fromEnv.status, 0, fromEnv.stderr);
    assert.equal(fromEnv.stderr, '');
    assert.equal(fromEnv.stdout, `no tool pins yet in ${join(dirname(file), 'pins.json')}\n`);
    const issuerOf = (r: ReturnType<typeof run>) => JSON.parse(Buffer.from(r.stdout.trim().split('.')[1]!, 'base64url').toString()).iss;
    assert.equal(issuerOf(run(['token', '--tenant', 'dev', '--sub', 'me'], { SWITCHBOARD_CONFIG: file })), 'https://other.example');
    assert.equal(issuerOf(run(['token', '--tenant', 'dev', '--sub', 'me', '--config', join(ROOT, 'deploy', 'quickstart.yaml')], { SWITCHBOARD_CONFIG: file })), issuerOf(run(['token', '--tenant', 'dev', '--sub', 'me'], { SWITCHBOARD_CONFIG: '' })));
  });

  it('pins names its Redis without the credentials in its URL (its password, also as a ?password= query, which ioredis honours)', async () => {
    const redis = await startRedis();
    try {
      const file = tempConfig(`store: { redis: { url: "\${PINS_REDIS}" } }\nupstreams: [{ name: a, transport: stdio, command: node }]\nendpoints: [{ path: /mcp, upstreams: [a] }]\n`);
      for (const url of [`redis://127.0.0.1:${redis.port}/0?password=TOPSECRET-query`, `redis://default:TOPSECRET-pass@127.0.0.1:${redis.port}/0`]) {
        const listed = run(['pins', 'list', '--config', file], { PINS_REDIS: url });
        assert.equal(listed.status, 0, listed.stderr);
        assert.match(listed.stdout, new RegExp(`^no tool pins yet in Redis redis://.*127\\.0\\.0\\.1:${redis.port}/0`));
        assert.doesNotMatch(listed.stdout + listed.stderr, /TOPSECRET/);
      }
    } finally {
      await redis.stop();
    }
  });

  it('pins list and pins approve print upstream-supplied names and text escaped: no raw control byte reaches the terminal', () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-cli-'));
    const pins = join(dir, 'pins.json');
    const evil = 'weather\u001b]0;owned\u0007\u001b[2J\u009b31m\u202e';
    const pending = { hash: 'b'.repeat(64), summary: 'Returns \u001b[8mhidden', firstSeen: '2026-01-01T00:00:00.000Z', findings: [{ kind: 'tag-chars', path: 'inputSchema.\u001b[1m', count: 1 }] };
    writeFileSync(pins, JSON.stringify({ version: 1, upstreams: { shifty: { [evil]: { approved: 'a'.repeat(64), pending }, plain: { approved: 'c'.repeat(64) } } } }));
    const config = tempConfig(`upstreams:\n  - { name: shifty, transport: stdio, sandbox: none, command: node }\nendpoints:\n  - { path: /mcp, upstreams: [shifty] }\npinning: { file: ${pins} }\n`);
    const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/;
    const listed = run(['pins', 'list', '--config', config]);
    assert.equal(listed.status, 0, listed.stderr);
    assert.doesNotMatch(listed.stdout + listed.stderr, RAW);
    assert.match(listed.stdout, /^shifty\t"weather\\u001b\]0;owned\\u0007\\u001b\[2J\\u009b31m\\u202e"\ta{64}\tstore$/m);
    assert.match(listed.stdout, /^shifty\tplain\tc{64}\tstore$/m, 'an ordinary name is printed as it is');
    const json = run(['pins', 'list', '--config', config, '--json']);
    assert.doesNotMatch(json.stdout, RAW);
    assert.deepEqual(Object.keys(JSON.parse(json.stdout).shifty).sort(), ['plain', evil].sort());
    const approved = run(['pins', 'approve', '--config', config, 'shifty']);
    assert.equal(approved.status, 0, approved.stderr);
    assert.doesNotMatch(approved.stdout + approved.stderr, RAW);
    assert.match(approved.stdout, /^approved shifty "weather\\u001b.*\\u202e" b{64} "Returns \\u001b\[8mhidden"$/m);
    const named = run(['pins', 'reject', '--config', config, 'shifty', evil]);
    assert.equal(named.status, 1);
    assert.doesNotMatch(named.stdout + named.stderr, RAW);
  });

  it('check-config given several files (a shell glob) refuses rather than check the first alone and say ok', () => {
    const bad = tempConfig('upstreams: []\n');
    const r = run(['check-config', join(ROOT, 'deploy', 'quickstart.yaml'), bad]);
    assert.equal(r.status, 2, r.stdout);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /one FILE at a time/);
  });

  it('serve given two config files refuses rather than serve the first and say nothing of the second (found by a review)', () => {
    const r = run(['serve', join(ROOT, 'deploy', 'quickstart.yaml'), tempConfig('upstreams: []\n')]);
    assert.equal(r.status, 2, r.stdout);
    assert.match(r.stderr, /one config file \(got 2\)/);
  });

  it('an option the command does not take is refused, not ignored (found by a review)', () => {
    // `pins approve --all --upstream github` approved every upstream's pending definitions: --upstream is links', not pins'.
    const pins = run(['pins', 'approve', '--all', '--upstream', 'github', '--config', 'deploy/quickstart.yaml']);
    assert.equal(pins.status, 2, pins.stdout);
    assert.match(pins.stderr, /switchboard pins: --upstream is not an option of this command/);
    const check = run(['check-config', 'deploy/quickstart.yaml', '--tenant', 'x']);
    assert.equal(check.status, 2, check.stdout);
    assert.match(check.stderr, /switchboard check-config: --tenant is not an option of this command/);
    const tools = run(['tools', '--config', 'deploy/quickstart.yaml', '--sub', 'alice']);
    assert.equal(tools.status, 2, tools.stdout);
    assert.match(tools.stderr, /--sub is not an option/);
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

  it('check-config and serve stop on a missing auth.keys file with the same one-line problem, no stack trace', () => {
    const file = tempConfig(`
auth: { mode: jwt, issuer: "https://idp.example", keys: [./keys/missing.jwk.json], algorithms: [EdDSA] }
tenants: [{ name: dev, endpoints: ["*"] }]
upstreams: [{ name: a, transport: stdio, command: node }]
endpoints: [{ path: /mcp, upstreams: [a] }]
`);
    const expected = `auth.keys[0]: ${join(dirname(file), 'keys', 'missing.jwk.json')} does not exist (a relative path is relative to the config file's directory)`;
    const checked = run(['check-config', file]);
    const served = run(['serve', '--config', file], { SWITCHBOARD_PORT: '0', SWITCHBOARD_METRICS_PORT: '0' });
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
    for (const r of [run(['check-config', file]), run(['serve', '--config', file], { SWITCHBOARD_PORT: '0' })]) {
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
    const r = run(['check-config', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /: ok \(1 upstreams, 1 endpoints\), with 2 warnings above\n$/);
    const warnings = r.stderr.trim().split('\n');
    assert.equal(warnings.length, 2, r.stderr);
    assert.match(warnings[0]!, /: warning: auth\.issuer: "my-gateway" is not a URL/);
    assert.match(warnings[1]!, /: warning: upstreams\[0\]\.args\[0\]: .*server\.mjs \("\.\/server\.mjs", relative to the config file's directory\) does not exist/);
  });

  it('check-config says a Docker Compose file or a Kubernetes manifest is not a gateway config', () => {
    const compose = run(['check-config', join(ROOT, 'deploy', 'docker-compose.yaml')]);
    assert.equal(compose.status, 1);
    assert.match(compose.stderr, /invalid configuration in .*docker-compose\.yaml:\n {2}- this is a Docker Compose file \(it has "services"\), not a Switchboard gateway config; pass the gateway config it mounts[^\n]*\n$/);
    const manifest = run(['check-config', join(ROOT, 'deploy', 'kubernetes', 'configmap.yaml')]);
    assert.equal(manifest.status, 1);
    assert.match(manifest.stderr, /\n {2}- this file is a Kubernetes manifest \(kind: ConfigMap\), not a Switchboard gateway config; the text of data\["config\.yaml"\] is one[^\n]*\n$/);
  });

  it('serve with a bad config exits non-zero before listening', () => {
    const file = tempConfig('upstreams: []\nendpoints: []\n');
    const r = run(['serve', '--config', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /invalid configuration/);
  });

  it('serve refuses a pins file it cannot read, rather than trust every tool on first sight', () => {
    const file = tempConfig(`server: { host: 127.0.0.1, port: 0 }\nmetrics: { enabled: false }\nupstreams:\n  - { name: a, transport: stdio, sandbox: none, command: node, args: [${join(ROOT, 'test', 'fixtures', 'conformance-server.mjs')}] }\nendpoints: [{ path: /mcp, upstreams: [a] }]\npinning: { file: ./pins.json }\n`);
    writeFileSync(join(dirname(file), 'pins.json'), '{"version": 1, "upstreams": {"a": ');
    const r = run(['serve', '--config', file]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /pinning\.file: pins file .*pins\.json is not valid JSON.*repair it, or move it away/);
    // check-config makes the same checks as serve: it passed this file (exit 0) that serve then refused.
    const check = run(['check-config', file]);
    assert.equal(check.status, 1, check.stdout);
    assert.match(check.stderr, /\n {2}- pinning\.file: pins file .*pins\.json is not valid JSON.*repair it, or move it away/);
    writeFileSync(join(dirname(file), 'pins.json'), '{"version": 1, "upstreams": {}}\n');
    assert.equal(run(['check-config', file]).status, 0);
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
        const r = run(['serve', '--config', tempConfig(yaml + upstream)]);
        assert.equal(r.status, 1, r.stderr);
        assert.equal(r.stderr, `switchboard: cannot listen on 127.0.0.1:${port}: address already in use (${key})\n`);
      }
    } finally {
      await new Promise((r) => held.close(r));
    }
  });

  it('serve without a config explains how to pass one', () => {
    const r = run(['serve'], { SWITCHBOARD_CONFIG: '' });
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
      const token = run(['token', '--tenant', 'dev', '--sub', 'readme-user']);
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
