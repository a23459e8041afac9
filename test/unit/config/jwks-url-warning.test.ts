// auth.jwksUrl decides whose tokens the gateway trusts: fetched over plain http from another host, anyone
// on the path (a shared network, a spoofed DNS answer) can answer with a key set of their own and sign
// tokens for any tenant and scope, the admin API's included (found by a review). Valid (an in-cluster
// issuer often speaks http), but said at load as the other auth warnings are; https or loopback is quiet.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkDocument } from '../../../src/config/load.js';

const doc = (jwksUrl: string) => ({
  server: { host: '127.0.0.1', publicUrl: 'https://gw.example' },
  auth: { mode: 'jwt', issuer: 'https://issuer.example', jwksUrl },
  tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
  upstreams: [{ name: 'a', transport: 'stdio', command: 'node' }],
  endpoints: [{ path: '/mcp', upstreams: ['a'] }],
});
const jwksWarnings = (url: string) => checkDocument(doc(url), 'test.yaml', {}, '/base').warnings.filter((w) => w.startsWith('auth.jwksUrl'));

describe('auth.jwksUrl over plain http', () => {
  it('warns for another host, without quoting the URL (it may carry credentials)', () => {
    const found = jwksWarnings('http://user:s3cret@keycloak.auth.svc:8080/realms/x/protocol/openid-connect/certs');
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0]!, /plain http.*keycloak\.auth\.svc.*sign tokens for any tenant and scope/);
    assert.doesNotMatch(found[0]!, /s3cret/);
  });

  it('says nothing for https, or for a loopback issuer', () => {
    assert.deepEqual(jwksWarnings('https://issuer.example/jwks.json'), []);
    assert.deepEqual(jwksWarnings('http://127.0.0.1:9000/jwks.json'), []);
    assert.deepEqual(jwksWarnings('http://localhost:9000/jwks.json'), []);
    assert.deepEqual(jwksWarnings('http://[::1]:9000/jwks.json'), []);
  });
});
