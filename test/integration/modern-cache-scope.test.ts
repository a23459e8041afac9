// cacheScope on 2026-07-28 results says whether an intermediary may give one caller's answer to another.
// "public" only where every caller sees the same thing: no tenant rule, no pinning, and an endpoint whose
// upstreams all serve every caller from shared instances. An instance of one user, tenant or session
// (per-user credentials above all) answers for that caller only (found by a review: it was "public").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { ISSUER, PUBLIC_URL, signHmac } from '../helpers/tokens.js';

describe('cacheScope of 2026-07-28 results by the upstreams that answer them', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [
        { name: 'everyone', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } },
        { name: 'mine', transport: 'stdio', ...FIXTURE, sharing: 'per-session', pool: { warm: 0, max: 4 } },
        { name: 'ours', transport: 'stdio', ...FIXTURE, sharing: 'per-tenant' },
      ],
      endpoints: [
        { path: '/shared', upstreams: ['everyone'] },
        { path: '/session', upstreams: ['mine'] },
        { path: '/tenant', upstreams: ['ours'] },
        { path: '/mixed', upstreams: ['everyone', 'mine'] },
      ],
    });
  });
  after(() => gw.close());

  for (const [path, scope] of [
    ['/shared', 'public'],
    ['/session', 'private'],
    ['/tenant', 'private'],
    ['/mixed', 'private'],
  ] as const) {
    it(`${path}: ${scope}`, async () => {
      for (const [method, params] of [
        ['tools/list', {}],
        ['resources/list', {}],
      ] as const) {
        const r = await modernPost(gw.url(path), method, params);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.result.cacheScope, scope, `${method}: ${JSON.stringify(r.body.result).slice(0, 200)}`);
      }
    });
  }
});

describe('cacheScope on an endpoint two tenants share, one of them with rules', () => {
  const HMAC_SECRET = 'modern-cache-scope-test-hmac-secret-32+';
  let gw: RunningGateway;
  const tokens: Record<string, string> = {};
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], hmacSecret: HMAC_SECRET, allowHmac: true, algorithms: ['HS256'] },
      tenants: [
        { name: 'open', endpoints: ['/mcp', '/solo'] },
        { name: 'narrow', endpoints: ['/mcp'], tools: { allow: ['*'], deny: ['test_error_handling'] } },
      ],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [
        { path: '/mcp', upstreams: ['fx'] },
        { path: '/solo', upstreams: ['fx'] },
      ],
    });
    tokens.open = await signHmac(HMAC_SECRET, { sub: 'olga', tenant: 'open', expIn: 3600 });
    tokens.narrow = await signHmac(HMAC_SECRET, { sub: 'nina', tenant: 'narrow', expIn: 3600 });
  });
  after(() => gw.close());

  const list = async (who: string, path = '/mcp') => {
    const r = await modernPost(gw.url(path), 'tools/list', {}, { token: tokens[who] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.result as { tools: Array<{ name: string }>; cacheScope: string };
  };

  it('the unfiltered tenant\'s list is private too: a shared cache would give the other tenant tools its rules hide', async () => {
    const open = await list('open');
    const narrow = await list('narrow');
    assert.ok(open.tools.some((t) => t.name === 'test_error_handling') && !narrow.tools.some((t) => t.name === 'test_error_handling'), 'the two tenants see different lists');
    assert.equal(narrow.cacheScope, 'private');
    assert.equal(open.cacheScope, 'private', 'what one caller is shown differs from what another caller of the endpoint is shown');
  });

  it('an endpoint only unfiltered tenants are granted stays public, whatever tenants elsewhere are shown', async () => {
    assert.equal((await list('open', '/solo')).cacheScope, 'public', 'the tenant "narrow" is not granted /solo');
  });
});
