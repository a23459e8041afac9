// Per-session stdio processes that each hold their user's token (tokenEnv), all run as one user id without
// a pid namespace of their own (sandbox none; limits with sandbox.user, or on a gateway not running as
// root: the Kubernetes setting): one session's process can read another's token from /proc/<pid>/environ,
// or ptrace it (found by a review; a process of a user read another's environ on this host). The schema
// insists on per-session so that "no other session may reach" a token; check-config and serve said nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkDocument } from '../../../src/config/load.js';
import { sharedUserTokenWarnings } from '../../../src/config/shared-user-tokens.js';

const exchange = { type: 'token-exchange', tokenEndpoint: 'https://idp.example/token', clientId: 'c', clientSecret: 's', audience: 'https://tickets.example' };
const doc = (sandbox: unknown) => ({
  upstreams: [{ name: 'tickets', transport: 'stdio', command: process.execPath, sandbox, sharing: 'per-session', tokenEnv: 'TICKETS_TOKEN', auth: exchange }],
  endpoints: [{ path: '/mcp', upstreams: ['tickets'] }],
});
const config = (sandbox: unknown) => checkDocument(doc(sandbox), 'test', {}).config;
const about = (warnings: string[]) => warnings.filter((w) => w.includes('TICKETS_TOKEN'));

describe('warnings: per-session tokens in processes that share a user', () => {
  it('sandbox none, and limits with a configured user', () => {
    for (const sandbox of ['none', { type: 'limits', user: { uid: 4242, gid: 4242 } }]) {
      const found = about(checkDocument(doc(sandbox), 'test', {}).warnings);
      assert.equal(found.length, 1, `${JSON.stringify(sandbox)}: ${found.join('\n')}`);
      assert.match(found[0]!, /^upstreams\[0\] \("tickets"\): .*one user id.*\/proc\/<pid>\/environ/);
    }
  });

  it('limits on a gateway not running as root; not with a root gateway (a user id per process) nor bubblewrap (a pid namespace each)', () => {
    assert.equal(sharedUserTokenWarnings(config({ type: 'limits' }), 10001).length, 1);
    assert.deepEqual(sharedUserTokenWarnings(config({ type: 'limits' }), 0), []);
    assert.deepEqual(sharedUserTokenWarnings(config({}), 10001), []);
    assert.deepEqual(sharedUserTokenWarnings(config({ user: { uid: 4242, gid: 4242 } }), 0), []);
  });
});
