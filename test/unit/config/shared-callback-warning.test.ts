// auth.callback: shared puts user-oauth upstreams on the one /oauth/callback, where an answer cannot be told
// apart by its address: one upstream's authorization server can have another's code redeemed at its own
// token endpoint (the mix-up attack) unless both send iss. Valid (an old registration), but said at load
// when two upstreams share it; one alone, or each on its own redirect URI (the default), is quiet.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkDocument } from '../../../src/config/load.js';

const upstream = (name: string, callback?: string) => ({
  name,
  transport: 'streamable-http',
  url: `https://${name}.example/mcp`,
  sharing: 'per-user',
  auth: { type: 'user-oauth', clientId: 'switchboard', authorizationServer: `https://${name}-as.example`, ...(callback ? { callback } : {}) },
});
const warnings = (...upstreams: object[]) =>
  checkDocument(
    {
      server: { host: '127.0.0.1', publicUrl: 'https://gw.example' },
      auth: { mode: 'jwt', issuer: 'https://issuer.example', jwksUrl: 'https://issuer.example/jwks' },
      vault: { key: Buffer.alloc(32, 1).toString('base64') },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      upstreams,
      endpoints: [{ path: '/mcp', upstreams: upstreams.map((u) => (u as { name: string }).name) }],
    },
    'test.yaml',
    {},
    '/base',
  ).warnings.filter((w) => w.includes('callback'));

describe('auth.callback shared on user-oauth upstreams', () => {
  it('warns when two upstreams share /oauth/callback, naming them', () => {
    const found = warnings(upstream('a', 'shared'), upstream('b', 'shared'), upstream('c'));
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0]!, /upstreams a, b: auth\.callback shared.*mix-up/);
  });

  it('says nothing for one shared upstream, or for the default (each its own)', () => {
    assert.deepEqual(warnings(upstream('a', 'shared'), upstream('b')), []);
    assert.deepEqual(warnings(upstream('a'), upstream('b')), []);
  });
});
