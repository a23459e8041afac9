import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ROOT, runCli, tempConfig } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';

describe('switchboard CLI: token and pins', () => {
  it('token prints a JWT for the quick start, and refuses to run without --tenant/--sub', () => {
    const ok = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--scope', 'a b', '--ttl', '5m']);
    assert.equal(ok.status, 0, ok.stderr);
    const [header, payload] = ok.stdout.trim().split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    assert.equal(header.alg, 'EdDSA');
    assert.equal(payload.iss, (parseYaml(readFileSync(join(ROOT, 'deploy', 'quickstart.yaml'), 'utf8')) as { auth: { issuer: string } }).auth.issuer);
    assert.equal(payload.aud, 'http://127.0.0.1:8080');
    assert.equal(payload.tenant, 'dev');
    assert.equal(payload.sub, 'me');
    assert.equal(payload.scope, 'a b');
    assert.equal(payload.exp - payload.iat, 300);
    const bad = runCli(['token', '--sub', 'me']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--tenant and --sub are required/);
  });

  it("token refuses a config whose gateway would not accept its token, and says none is needed with auth off", () => {
    // The image's built-in config: JWT from an identity provider's JWKS, no static key.
    const idp = runCli(['token', '--tenant', 'default', '--sub', 'me', '--config', join(ROOT, 'deploy', 'examples', 'image-default.yaml')], {
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
    const wrongKey = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--config', other]);
    assert.equal(wrongKey.status, 1, wrongKey.stdout);
    assert.match(wrongKey.stderr, /does not trust .*none of auth\.keys/);
    const rs = tempConfig(readFileSync(join(ROOT, 'deploy', 'quickstart.yaml'), 'utf8').replace('algorithms: [EdDSA]', 'algorithms: [RS256]').replaceAll('./dev-keys/', `${join(ROOT, 'deploy', 'dev-keys')}/`));
    const wrongAlg = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--config', rs]);
    assert.equal(wrongAlg.status, 1, wrongAlg.stdout);
    assert.match(wrongAlg.stderr, /EdDSA.*auth\.algorithms/);
    const open = tempConfig('auth: { mode: none }\nupstreams: [{ name: a, transport: stdio, command: node }]\nendpoints: [{ path: /mcp, upstreams: [a] }]\n');
    const none = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--config', open]);
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
      const r = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--key', key]);
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, why);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /c2Vj|    at /);
    }
  });

  it('token refuses a tenant the config does not have: the gateway would answer every request with 403', () => {
    const r = runCli(['token', '--tenant', 'deV', '--sub', 'me']);
    assert.equal(r.status, 1, r.stdout);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /no tenant "deV".*\(tenants: dev\)/);
  });

  it('token refuses an --audience the gateway does not accept: it would answer every request with 401 (found by a review)', () => {
    const r = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--audience', 'https://elsewhere.example']);
    assert.equal(r.status, 1, r.stdout);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /does not accept the audience "https:\/\/elsewhere\.example" \(it accepts http:\/\/127\.0\.0\.1:8080, /);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    // One endpoint's URL is an audience it accepts (on that endpoint).
    const endpoint = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--audience', 'http://127.0.0.1:8080/mcp']);
    assert.equal(endpoint.status, 0, endpoint.stderr);
    assert.equal(JSON.parse(Buffer.from(endpoint.stdout.trim().split('.')[1]!, 'base64url').toString()).aud, 'http://127.0.0.1:8080/mcp');
  });

  it('token signs a "typ" that auth.tokenTypes accepts', () => {
    const file = tempConfig(`
auth: { mode: jwt, issuer: "https://idp.example", keys: [${join(ROOT, 'deploy', 'dev-keys', 'dev-public.jwk.json')}], algorithms: [EdDSA], tokenTypes: [JWT] }
tenants: [{ name: dev, endpoints: ["*"] }]
upstreams: [{ name: a, transport: stdio, command: node }]
endpoints: [{ path: /mcp, upstreams: [a] }]
`);
    const r = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--config', file]);
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
    const r = runCli(['token', '--tenant', 'dev', '--sub', 'me', '--scope', 'files:read', '--scope', 'files:write', '--config', file]);
    assert.equal(r.status, 0, r.stderr);
    const payload = JSON.parse(Buffer.from(r.stdout.trim().split('.')[1]!, 'base64url').toString());
    assert.equal(payload.org_id, 'dev');
    // The gateway reads scopes from "scp" here: in "scope" the --scope values were no scopes at all.
    assert.equal(payload.scp, 'files:read files:write');
    assert.equal(payload.scope, undefined);
  });

  it('token and pins find their config alike: --config, else SWITCHBOARD_CONFIG, else the quick start', () => {
    const quick = runCli(['pins', 'list'], { SWITCHBOARD_CONFIG: '' });
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
    const fromEnv = runCli(['pins', 'list'], { SWITCHBOARD_CONFIG: file });
    assert.equal(fromEnv.status, 0, fromEnv.stderr);
    assert.equal(fromEnv.stderr, '');
    assert.equal(fromEnv.stdout, `no tool pins yet in ${join(dirname(file), 'pins.json')}\n`);
    const issuerOf = (r: ReturnType<typeof runCli>) => JSON.parse(Buffer.from(r.stdout.trim().split('.')[1]!, 'base64url').toString()).iss;
    assert.equal(issuerOf(runCli(['token', '--tenant', 'dev', '--sub', 'me'], { SWITCHBOARD_CONFIG: file })), 'https://other.example');
    assert.equal(issuerOf(runCli(['token', '--tenant', 'dev', '--sub', 'me', '--config', join(ROOT, 'deploy', 'quickstart.yaml')], { SWITCHBOARD_CONFIG: file })), issuerOf(runCli(['token', '--tenant', 'dev', '--sub', 'me'], { SWITCHBOARD_CONFIG: '' })));
  });

  it('pins names its Redis without the credentials in its URL (its password, also as a ?password= query, which ioredis honours)', async () => {
    const redis = await startRedis();
    try {
      const file = tempConfig(`store: { redis: { url: "\${PINS_REDIS}" } }\nupstreams: [{ name: a, transport: stdio, command: node }]\nendpoints: [{ path: /mcp, upstreams: [a] }]\n`);
      for (const url of [`redis://127.0.0.1:${redis.port}/0?password=TOPSECRET-query`, `redis://default:TOPSECRET-pass@127.0.0.1:${redis.port}/0`]) {
        const listed = runCli(['pins', 'list', '--config', file], { PINS_REDIS: url });
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
    const listed = runCli(['pins', 'list', '--config', config]);
    assert.equal(listed.status, 0, listed.stderr);
    assert.doesNotMatch(listed.stdout + listed.stderr, RAW);
    assert.match(listed.stdout, /^shifty\t"weather\\u001b\]0;owned\\u0007\\u001b\[2J\\u009b31m\\u202e"\ta{64}\tstore$/m);
    assert.match(listed.stdout, /^shifty\tplain\tc{64}\tstore$/m, 'an ordinary name is printed as it is');
    const json = runCli(['pins', 'list', '--config', config, '--json']);
    assert.doesNotMatch(json.stdout, RAW);
    assert.deepEqual(Object.keys(JSON.parse(json.stdout).shifty).sort(), ['plain', evil].sort());
    const shown = runCli(['pins', 'approve', '--config', config, 'shifty']);
    assert.equal(shown.status, 2, shown.stdout);
    assert.doesNotMatch(shown.stdout + shown.stderr, RAW);
    assert.match(shown.stdout, /^pending shifty "weather\\u001b.*\\u202e" b{64} "Returns \\u001b\[8mhidden"\n  hidden text\ttag-chars ×1 in "inputSchema\.\\u001b\[1m"$/m);
    assert.match(shown.stderr, /run: switchboard pins approve --config FILE shifty --hash b{64}\n$/);
    const approved = runCli(['pins', 'approve', '--config', config, 'shifty', '--hash', 'b'.repeat(64)]);
    assert.equal(approved.status, 0, approved.stderr);
    assert.doesNotMatch(approved.stdout + approved.stderr, RAW);
    assert.match(approved.stdout, /^approved shifty "weather\\u001b.*\\u202e" b{64} "Returns \\u001b\[8mhidden"$/m);
    const named = runCli(['pins', 'reject', '--config', config, 'shifty', evil]);
    assert.equal(named.status, 1);
    assert.doesNotMatch(named.stdout + named.stderr, RAW);
  });
});
