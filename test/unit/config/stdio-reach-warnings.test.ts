// What a stdio server that shares the gateway's network can reach, said as config warnings (found by a
// review): under `sandbox: limits` (or none, or bubblewrap with network: true) a server reaches the
// gateway's loopback. An admin API that lets in every local caller, or whose token it can read from a
// file, lets it approve its own pending tool pins; with client authentication off (the sidecar's
// setting) it can call the gateway's endpoints as the anonymous tenant, and other upstreams' tools with
// their credentials. check-config and serve said nothing. Checked through checkDocument, what both use.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkDocument } from '../../../src/config/load.js';

const TOKEN = 'admin-token-0123456789-0123456789-abcdef';
const stdio = (name: string, sandbox: unknown) => ({ name, transport: 'stdio', command: process.execPath, args: [], sandbox });
const remote = { name: 'tickets', transport: 'streamable-http', url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer t' } };

function warnings(doc: Record<string, unknown>): string[] {
  const upstreams = doc.upstreams as Array<{ name: string }>;
  const base = { server: { host: '127.0.0.1', port: 8080 }, auth: { mode: 'none' }, endpoints: [{ path: '/mcp', upstreams: upstreams.map((u) => u.name) }] };
  return checkDocument({ ...base, ...doc }, 'test', {}).warnings;
}

describe('warnings: what a stdio server sharing the network can reach', () => {
  it('an admin API without authentication, and one whose token is in a file', () => {
    const open = warnings({ admin: { enabled: true }, auth: { mode: 'none' }, upstreams: [stdio('echo', { type: 'limits' })] });
    assert.deepEqual(open, [
      "admin: the admin API (127.0.0.1:9465) lets in every local caller, and stdio upstream \"echo\" (sandbox limits) shares the gateway's network: such a server can approve its own pending tool pins, end sessions and reload; set admin.token as ${ENV}, or run servers you do not trust in bubblewrap without network (the default sandbox)",
    ]);
    // bubblewrap with network sees no file of the host's: only "echo" can read the token.
    const file = warnings({ admin: { enabled: true, tokenFile: '/run/secrets/admin-token' }, upstreams: [stdio('echo', 'none'), stdio('wide', { network: true })] }).filter((w) => w.startsWith('admin'));
    assert.equal(file.length, 1, file.join('\n'));
    assert.match(file[0]!, /^admin\.tokenFile: stdio upstream "echo" \(sandbox none\) shares the gateway's network and filesystem: one that can read \/run\/secrets\/admin-token .*can use the admin API; prefer admin\.token as \$\{ENV\}/);
    const wide = warnings({ admin: { enabled: true }, upstreams: [stdio('wide', { network: true })] });
    assert.match(wide[0]!, /^admin: .*"wide" \(bubblewrap with network: true\)/);
  });

  it('client authentication off, with other upstreams to reach through the gateway', () => {
    const sidecar = warnings({ upstreams: [remote, stdio('echo', { type: 'limits' })] });
    assert.deepEqual(sidecar, [
      "auth.mode: none, and stdio upstream \"echo\" (sandbox limits) shares the gateway's network: such a server can call the gateway's endpoints (127.0.0.1:8080) as the anonymous tenant, and through them the other upstreams' tools with their credentials; run servers you do not trust in bubblewrap without network (the default sandbox)",
    ]);
  });

  it('nothing for a safe config: bubblewrap without network, or an admin token from the environment and client authentication on', () => {
    assert.deepEqual(warnings({ admin: { enabled: true }, upstreams: [remote, stdio('boxed', {})] }), []);
    assert.deepEqual(warnings({ admin: { enabled: true, token: TOKEN }, upstreams: [stdio('echo', { type: 'limits' })] }), []);
    assert.deepEqual(warnings({ upstreams: [stdio('alone', { type: 'limits' })] }), [], 'no other upstream to reach through the gateway');
    const jwt = { mode: 'jwt', issuer: 'https://idp.example', jwksUrl: 'https://idp.example/jwks' };
    const withJwt = warnings({ server: { host: '127.0.0.1', port: 8080, publicUrl: 'https://gw.example' }, auth: jwt, tenants: [{ name: 't', endpoints: ['*'] }], admin: { enabled: true }, upstreams: [remote, stdio('echo', { type: 'limits' })] });
    assert.deepEqual(withJwt, []);
  });
});
