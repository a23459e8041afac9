import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TenantConfig } from '../../../src/config/schema.js';
import { TenantPolicy } from '../../../src/policy/tenant-policy.js';

const tenant = (tools: TenantConfig['tools']) =>
  new TenantPolicy({ name: 't', endpoints: ['*'], tools, resources: { allow: ['*'], deny: [] }, prompts: { allow: ['*'], deny: [] }, limits: {}, arguments: [], confirm: [] } as TenantConfig);

describe('TenantPolicy allow rules with scopes', () => {
  it('the first allow pattern that matches decides: a broader rule after a scoped one does not grant what it asks scopes for', () => {
    const t = tenant({ allow: [{ match: 'github__delete_*', scopes: ['admin'] }, 'github__*'], deny: [] });
    assert.deepEqual(t.decide('tool', 'github__delete_repo', new Set()), { allowed: false, rule: 'tools.allow:github__delete_* (missing scope admin)', reason: 'missing_scope', missingScopes: ['admin'] });
    assert.equal(t.decide('tool', 'github__delete_repo', new Set(['admin'])).allowed, true);
    assert.deepEqual(t.decide('tool', 'github__get_issue', new Set()), { allowed: true, rule: 'tools.allow:github__*', reason: 'allowed' });
  });

  it('an unscoped rule first wins over a scoped one after it (order is the operator\'s)', () => {
    const t = tenant({ allow: ['github__*', { match: 'github__delete_*', scopes: ['admin'] }], deny: [] });
    assert.equal(t.decide('tool', 'github__delete_repo', new Set()).allowed, true);
  });
});

describe('TenantPolicy with a tool known by two names (an endpoint showing one upstream unprefixed)', () => {
  it('a deny of the prefixed name applies to the bare one; an allow of either grants', () => {
    const t = tenant({ allow: ['*'], deny: ['github__delete_*'] });
    assert.deepEqual(t.decide('tool', 'delete_repo', new Set(), true, 'github__delete_repo'), { allowed: false, rule: 'tools.deny:github__delete_*', reason: 'deny_rule' });
    assert.equal(t.decide('tool', 'get_issue', new Set(), true, 'github__get_issue').allowed, true);
    const prefixedOnly = tenant({ allow: ['github__*'], deny: [] });
    assert.equal(prefixedOnly.decide('tool', 'get_issue', new Set(), true, 'github__get_issue').allowed, true);
    assert.equal(prefixedOnly.decide('tool', 'get_issue', new Set()).allowed, false);
  });
});

describe('TenantPolicy.filtersNothing (a modern answer it covers may be cached publicly)', () => {
  it('is false when a scoped rule comes before "*": that tenant filters by scope (found by a review)', () => {
    assert.equal(tenant({ allow: ['*'], deny: [] }).filtersNothing, true);
    assert.equal(tenant({ allow: ['github__*', '*'], deny: [] }).filtersNothing, true);
    assert.equal(tenant({ allow: [{ match: 'github__delete_*', scopes: ['admin'] }, '*'], deny: [] }).filtersNothing, false);
    assert.equal(tenant({ allow: ['*', { match: 'github__delete_*', scopes: ['admin'] }], deny: [] }).filtersNothing, true);
  });
});
