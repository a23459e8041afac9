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

  it('a scope a first-matching rule asks of either name holds: "*" after it, matching the other name, does not grant the tool', () => {
    // Before: [{echo, scopes: [admin]}, "*"] let any token call echo on such an endpoint, "*" matching echo__echo.
    const bare = tenant({ allow: [{ match: 'delete_*', scopes: ['admin'] }, '*'], deny: [] });
    assert.deepEqual(bare.decide('tool', 'delete_repo', new Set(), true, 'github__delete_repo'), { allowed: false, rule: 'tools.allow:delete_* (missing scope admin)', reason: 'missing_scope', missingScopes: ['admin'] });
    assert.equal(bare.decide('tool', 'delete_repo', new Set(['admin']), true, 'github__delete_repo').allowed, true);
    const prefixed = tenant({ allow: [{ match: 'github__delete_*', scopes: ['admin'] }, '*'], deny: [] });
    assert.equal(prefixed.decide('tool', 'delete_repo', new Set(), true, 'github__delete_repo').reason, 'missing_scope');
    assert.equal(prefixed.decide('tool', 'get_issue', new Set(), true, 'github__get_issue').allowed, true, 'the rest needs no scope');
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

describe('TenantPolicy on URIs with characters outside URI syntax (found by a review)', () => {
  const resources = (allow: string[], deny: string[]) =>
    new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: ['*'], deny: [] }, resources: { allow, deny }, prompts: { allow: ['*'], deny: [] }, limits: {}, arguments: [], confirm: [] } as TenantConfig);
  const none = new Set<string>();

  it('an IRI and its percent-encoded URI are one resource to the rules, whichever way the deny is written (RFC 3987 §3.1)', () => {
    for (const deny of ['notes://x/sécret', 'notes://x/s%C3%A9cret', 'notes://x/s%c3%a9cret', 'notes://x/s*cret']) {
      const t = resources(['*'], [deny]);
      assert.equal(t.decide('resource', 'notes://x/sécret', none).allowed, false, `${deny}: raw`);
      assert.equal(t.decide('resource', 'notes://x/s%C3%A9cret', none).allowed, false, `${deny}: encoded`);
      assert.equal(t.decide('resource', 'notes://x/public', none).allowed, true, `${deny}: others pass`);
    }
    const spaced = resources(['*'], ['notes://x/my secret/*']);
    assert.equal(spaced.decide('resource', 'notes://x/my%20secret/1', none).allowed, false, 'a raw space in the deny covers %20');
    assert.equal(resources(['*'], ['notes://x/my%20secret/*']).decide('resource', 'notes://x/my secret/1', none).allowed, false, '%20 in the deny covers a raw space');
    const emoji = resources(['*'], ['notes://x/📁/*']);
    assert.equal(emoji.decide('resource', 'notes://x/%F0%9F%93%81/a', none).allowed, false, 'a character beyond the BMP');
  });

  it('an allow written either way grants both spellings; a template is matched the same way', () => {
    const t = resources(['notes://café/*'], []);
    assert.equal(t.decide('resource', 'notes://café/menu', none).allowed, false, 'a non-ASCII host is still refused (ambiguous)');
    const p = resources(['notes://x/café/*'], []);
    assert.equal(p.decide('resource', 'notes://x/caf%C3%A9/menu', none).allowed, true);
    assert.equal(p.decide('resource', 'notes://x/café/menu', none).allowed, true);
    assert.equal(resources(['*'], ['notes://x/café/*']).decide('resource', 'notes://x/caf%C3%A9{/id}', none, 'template').allowed, false);
  });

  it('a URI holding a lone surrogate is refused (no UTF-8 spelling names it)', () => {
    assert.equal(resources(['*'], []).decide('resource', 'notes://x/\ud800', none).allowed, false);
  });
});

describe('TenantPolicy on a URI with a fragment (found by a review)', () => {
  const resources = (allow: string[], deny: string[]) =>
    new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: ['*'], deny: [] }, resources: { allow, deny }, prompts: { allow: ['*'], deny: [] }, limits: {}, arguments: [], confirm: [] } as TenantConfig);
  const none = new Set<string>();

  it('judges the resource the URI names without its fragment: a tenant with a deny rule reads file:///docs/a.txt#intro', () => {
    const t = resources(['file:///docs/*'], ['file:///docs/secret*']);
    assert.deepEqual(t.decide('resource', 'file:///docs/a.txt#intro', none), { allowed: true, rule: 'resources.allow:file:///docs/*', reason: 'allowed' });
    assert.equal(resources(['file:///docs/a.txt'], []).decide('resource', 'file:///docs/a.txt#/section/2', none).allowed, true, 'an exact allow covers its fragments');
  });

  it('a fragment passes no deny: one of the resource, or one written with the fragment, still refuses it', () => {
    const t = resources(['*'], ['file:///docs/secret', 'file:///docs/secret/*', 'file:///docs/notes#private']);
    for (const uri of ['file:///docs/secret#x', 'file:///docs/secret/key.txt#x', 'file:///docs/notes#private']) assert.equal(t.decide('resource', uri, none).reason, 'deny_rule', uri);
    assert.equal(t.decide('resource', 'file:///docs/notes#public', none).allowed, true);
    assert.equal(resources(['file:///docs/*#public'], []).decide('resource', 'file:///secret#public', none).allowed, false, 'an allow is matched against the resource, not the fragment');
  });

  it('a fragment that could climb out of the resource (a dot-segment, a backslash, a NUL, escaped or not) is still refused', () => {
    const t = resources(['file:///docs/*'], ['file:///docs/secret*']);
    for (const uri of ['file:///docs/a.txt#/../../secret/key', 'file:///docs/a.txt#..', 'file:///docs/a.txt#.%2F..%2Fsecret', 'file:///docs/a.txt#a%5C..%5Cb', 'file:///docs/a.txt#a%00']) {
      assert.equal(t.decide('resource', uri, none).reason, 'not_allowed', uri);
    }
  });
});

describe('TenantPolicy on a file URI with an authority or a query (found by a review)', () => {
  const resources = (r: TenantConfig['resources']) =>
    new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: ['*'], deny: [] }, resources: r, prompts: { allow: ['*'], deny: [] }, limits: {}, arguments: [], confirm: [] } as TenantConfig);
  const none = new Set<string>();

  it('a deny of the path holds under any host or user information (a server may read the path alone)', () => {
    const t = resources({ allow: ['*'], deny: ['file:///dir/secret*'] });
    for (const uri of ['file://evil/dir/secret/key.txt', 'file://u@/dir/secret/key.txt', 'file://u@evil.example/dir/secret#x']) {
      assert.equal(t.decide('resource', uri, none).reason, 'deny_rule', uri);
    }
    assert.equal(t.decide('resource', 'file://evil/dir/a.txt', none).allowed, true);
  });

  it('an exact deny holds with a query (a server reading the path ignores it); a "?" in the fragment is no query', () => {
    const t = resources({ allow: ['*'], deny: ['file:///etc/shadow'] });
    for (const uri of ['file:///etc/shadow?x=1', 'file://h/etc/shadow?x', 'file:///etc/shadow?x#y']) assert.equal(t.decide('resource', uri, none).reason, 'deny_rule', uri);
    assert.equal(t.decide('resource', 'file:///etc/hosts?x=1', none).allowed, true);
    assert.equal(t.decide('resource', 'file:///etc/shadowy#?', none).allowed, true);
  });

  it('the scopes the rule matching the path asks hold; an allow of the path alone does not grant another host', () => {
    const scoped = resources({ allow: [{ match: 'file:///dir/secret/*', scopes: ['admin'] }, '*'], deny: [] });
    assert.equal(scoped.decide('resource', 'file://evil/dir/secret/key.txt', none).reason, 'missing_scope');
    assert.equal(scoped.decide('resource', 'file://evil/dir/secret/key.txt', new Set(['admin'])).allowed, true);
    const local = resources({ allow: ['file:///docs/*'], deny: [] });
    assert.equal(local.decide('resource', 'file://evil/docs/a.txt', none).allowed, false);
    assert.equal(local.decide('resource', 'file:///docs/a.txt', none).allowed, true);
  });
});
