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

describe('TenantPolicy on a resource template (found by a review)', () => {
  const resources = (allow: string[], deny: string[]) =>
    new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: ['*'], deny: [] }, resources: { allow, deny }, prompts: { allow: ['*'], deny: [] }, limits: {}, arguments: [], confirm: [] } as TenantConfig);

  it('an expression that expands with a separator ({/id}, {?q}) is matched with it: a deny of the URIs it gives hides the template and its completions', () => {
    const t = resources(['*'], ['notes://secret/*', 'search://items?*']);
    assert.equal(t.decide('resource', 'notes://secret/1', new Set()).allowed, false, 'what the template gives is denied');
    assert.deepEqual(t.decide('resource', 'notes://secret{/id}', new Set(), 'template'), { allowed: false, rule: 'resources.deny:notes://secret/*', reason: 'deny_rule' });
    assert.equal(t.decide('resource', 'search://items{?q}', new Set(), 'template').allowed, false);
    assert.equal(t.decide('resource', 'notes://public{/id}', new Set(), 'template').allowed, true);
    // An allow of the URIs it gives grants it too; one written as the template still does.
    assert.equal(resources(['notes://public/*'], []).decide('resource', 'notes://public{/id}', new Set(), 'template').allowed, true);
    assert.equal(resources(['notes://public{/id}'], []).decide('resource', 'notes://public{/id}', new Set(), 'template').allowed, true);
  });
});
