import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/index.js';
import { redactConfig } from '../../../src/config/redact.js';

const minimal = (admin: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  admin,
  upstreams: [{ name: 'u', transport: 'stdio', command: 'node', sandbox: 'none' }],
  endpoints: [{ path: '/mcp', upstreams: ['u'] }],
  ...extra,
});

function problems(doc: unknown): string[] {
  try {
    parseConfig(doc, 'test', {}, '/tmp');
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('admin config', () => {
  it('off by default, loopback by default when on', () => {
    const c = parseConfig(minimal({}), 'test', {}, '/tmp');
    assert.equal(c.admin.enabled, false);
    assert.equal(c.admin.host, '127.0.0.1');
  });

  it('a non-loopback admin listener without authentication is a config error, with its path', () => {
    assert.deepEqual(
      problems(minimal({ enabled: true, host: '0.0.0.0' })).map((p) => p.split(':')[0]),
      ['admin.host'],
    );
    assert.deepEqual(problems(minimal({ enabled: true, host: '0.0.0.0', token: 'x'.repeat(32) })), []);
    assert.deepEqual(problems(minimal({ enabled: true, host: '0.0.0.0', tokenFile: 'admin-token' })), []);
  });

  it('a short token, or token and tokenFile together, are refused', () => {
    assert.match(problems(minimal({ token: 'short' })).join('\n'), /^admin\.token: at least 32 characters/m);
    assert.match(problems(minimal({ token: 'x'.repeat(32), tokenFile: 'f' })).join('\n'), /^admin\.tokenFile: set token or tokenFile, not both/m);
  });

  it('tokenFile is relative to the config file', () => {
    assert.equal(parseConfig(minimal({ tokenFile: 'secrets/admin' }), 'test', {}, '/etc/swb').admin.tokenFile, '/etc/swb/secrets/admin');
  });

  it('redaction: the Redis URL keeps its host, not its password', () => {
    const c = parseConfig(minimal({}, { store: { redis: { url: 'redis://default:s3cret-pass@redis.internal:6379/0' } } }), 'test', {}, '/tmp');
    const url = redactConfig(c).store.redis!.url;
    assert.ok(!url.includes('s3cret-pass'));
    assert.match(url, /redis\.internal:6379/);
    assert.equal(c.store.redis!.url.includes('s3cret-pass'), true, 'the running config is not touched');
  });

  it("redaction: a stdio upstream's token-exchange secret is hidden like a remote one's", () => {
    const auth = { type: 'token-exchange', tokenEndpoint: 'https://idp.example/token', clientId: 'c', clientSecret: 'exchange-s3cret', audience: 'https://gh.example' };
    const c = parseConfig(minimal({}, { upstreams: [{ name: 'u', transport: 'stdio', command: 'node', sandbox: 'none', sharing: 'per-session', tokenEnv: 'GH_TOKEN', auth }] }), 'test', {}, '/tmp');
    assert.ok(!JSON.stringify(redactConfig(c)).includes('exchange-s3cret'));
  });

  it("redaction: the consent check's own sign-in (vault.verifyUser) has its client secret and URL credentials hidden", () => {
    const verifyUser = { clientId: 'gateway-console', clientSecret: 'verify-s3cret', authorizationServer: 'https://idp.example/?key=issuer-s3cret' };
    const vault = { key: Buffer.alloc(32, 7).toString('base64'), verifyUser };
    const c = parseConfig(minimal({}, { vault }), 'test', {}, '/tmp');
    const shown = JSON.stringify(redactConfig(c));
    for (const secret of ['verify-s3cret', 'issuer-s3cret']) assert.ok(!shown.includes(secret), secret);
    assert.match(shown, /gateway-console/);
    assert.equal(c.vault.verifyUser!.clientSecret, 'verify-s3cret', 'the running config is not touched');
  });

  it("redaction: a tool-search embeddings provider's headers and URL credentials are hidden", () => {
    const embeddings = { url: 'https://user:url-s3cret@embed.example/v1/embeddings?key=query-s3cret', model: 'm', headers: { authorization: 'Bearer header-s3cret' } };
    const c = parseConfig(minimal({}, { endpoints: [{ path: '/mcp', upstreams: ['u'], tools: { exposure: 'search', embeddings } }] }), 'test', {}, '/tmp');
    const shown = JSON.stringify(redactConfig(c));
    for (const secret of ['url-s3cret', 'query-s3cret', 'header-s3cret']) assert.ok(!shown.includes(secret), secret);
    assert.match(shown, /embed\.example/);
  });

  it('redaction: credentials given as a URL user name or query are hidden in every URL the config holds', () => {
    const auth = { type: 'client-credentials', tokenUrl: 'https://idp.example/token?key=token-s3cret', clientId: 'c', clientSecret: 'x' };
    const c = parseConfig(
      minimal({}, {
        auth: { jwksUrl: 'https://jwks-s3cret@idp.example/jwks?sig=jwks-query-s3cret' },
        upstreams: [{ name: 'u', transport: 'streamable-http', url: 'https://gh-s3cret:x-oauth-basic@api.example/mcp', auth }],
      }),
      'test',
      {},
      '/tmp',
    );
    const shown = JSON.stringify(redactConfig(c));
    for (const secret of ['jwks-s3cret', 'jwks-query-s3cret', 'gh-s3cret', 'token-s3cret']) assert.ok(!shown.includes(secret), secret);
    for (const host of ['idp.example', 'api.example']) assert.match(shown, new RegExp(host.replace('.', '\\.')));
  });
});
