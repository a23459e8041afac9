import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/index.js';
import { tenantsReaching, withTenantShare } from '../../../src/config/tenant-share.js';

function config(tenants: Array<{ name: string; endpoints: string[] }>, pool: Record<string, unknown>) {
  return parseConfig(
  {
    auth: { mode: 'jwt', issuer: 'https://issuer.test', jwksUrl: 'https://issuer.test/jwks' },
    tenants,
    upstreams: [
      { name: 'solo', transport: 'stdio', command: 'node', args: ['x.js'], sharing: 'per-session', sandbox: 'none', pool },
      { name: 'other', transport: 'stdio', command: 'node', args: ['y.js'], sandbox: 'none' },
    ],
    endpoints: [
      { path: '/mcp', upstreams: ['solo'] },
      { path: '/two', upstreams: ['solo', 'other'] },
      { path: '/elsewhere', upstreams: ['other'] },
    ],
  },
  'test',
  {},
  );
}

describe('per-tenant share of a per-session pool', () => {
  it('two tenants reaching the upstream: each may hold max - 1 unless configured', () => {
    const c = config([{ name: 'a', endpoints: ['/mcp'] }, { name: 'b', endpoints: ['/two'] }], { max: 3 });
    assert.equal(tenantsReaching(c, 'solo'), 2);
    assert.equal(withTenantShare(c, c.upstreams[0]!).pool.perTenantMax, 2);
  });

  it('a wildcard grant reaches every upstream', () => {
    const c = config([{ name: 'a', endpoints: ['*'] }, { name: 'b', endpoints: ['/mcp'] }], { max: 4 });
    assert.equal(withTenantShare(c, c.upstreams[0]!).pool.perTenantMax, 3);
  });

  it('one tenant reaching it keeps the whole pool; a configured share is kept as it is', () => {
    const single = config([{ name: 'a', endpoints: ['/mcp'] }, { name: 'b', endpoints: ['/elsewhere'] }], { max: 3 });
    assert.equal(tenantsReaching(single, 'solo'), 1);
    assert.equal(withTenantShare(single, single.upstreams[0]!).pool.perTenantMax, undefined);
    const set = config([{ name: 'a', endpoints: ['/mcp'] }, { name: 'b', endpoints: ['/two'] }], { max: 3, perTenantMax: 3 });
    assert.equal(withTenantShare(set, set.upstreams[0]!).pool.perTenantMax, 3);
  });

  it('shared upstreams and pools of one are left alone', () => {
    const c = config([{ name: 'a', endpoints: ['*'] }, { name: 'b', endpoints: ['*'] }], { max: 1 });
    assert.equal(withTenantShare(c, c.upstreams[0]!).pool.perTenantMax, undefined);
    assert.equal(withTenantShare(c, c.upstreams[1]!), c.upstreams[1]);
  });
});
