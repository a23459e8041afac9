// The admin API accepts a JWT carrying admin.scope from whatever auth trusts; its listener can be off
// loopback (admin.host) while the MCP listener is on it. A gateway trusting the published development key
// with server.host 127.0.0.1 and admin.host 0.0.0.0 let anyone who reaches the admin port sign an admin
// token, and neither the warn line nor switchboard_auth_development_key_exposed said so: only server.host
// and server.publicUrl counted (found by a review). The config as the gateway parses it, no listener bound.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { devKeyExposure } from '../../../src/auth/dev-key.js';
import { parseConfig } from '../../../src/config/index.js';

const DEV_PUBLIC = join(import.meta.dirname, '..', '..', '..', 'deploy', 'dev-keys', 'dev-public.jwk.json');

const config = (admin: object) =>
  parseConfig({
    server: { host: '127.0.0.1', publicUrl: 'http://127.0.0.1:8080' },
    admin,
    auth: { mode: 'jwt', issuer: 'https://idp.test', keys: [DEV_PUBLIC], algorithms: ['EdDSA'] },
    tenants: [{ name: 'dev', endpoints: ['*'] }],
    upstreams: [{ name: 'a', transport: 'stdio', command: 'node' }],
    endpoints: [{ path: '/mcp', upstreams: ['a'] }],
  });

describe('the published development key and the admin listener', () => {
  it('counts an admin API listening beyond loopback, which accepts admin-scope tokens signed with it', () => {
    const exposed = devKeyExposure(config({ enabled: true, host: '0.0.0.0' }));
    assert.deepEqual(exposed?.files, [DEV_PUBLIC]);
    assert.match(exposed!.message, /published development key .* and its admin API listens on 0\.0\.0\.0: anyone can sign tokens/);
  });

  it('leaves out an admin API on loopback, or one that is off (its host then binds nothing)', () => {
    assert.equal(devKeyExposure(config({ enabled: true, host: '127.0.0.1' })), undefined);
    assert.equal(devKeyExposure(config({ enabled: false, host: '0.0.0.0' })), undefined);
  });
});
