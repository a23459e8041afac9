// A session's guard follows its latest token; the guard a request runs with judges by the request's own
// token (SessionGuard.as, GuardViews) and shares the rest: tenant (a reload's retarget), limits, audit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../../../src/auth/principal.js';
import type { TenantConfig } from '../../../src/config/schema.js';
import { GuardViews } from '../../../src/policy/guard-views.js';
import { MemoryLimitCounters } from '../../../src/policy/limit-counters.js';
import { MemorySessionSlots } from '../../../src/policy/session-slots.js';
import { SessionGuard } from '../../../src/policy/session-guard.js';
import { TenantPolicy } from '../../../src/policy/tenant-policy.js';

const tenant = (limits: TenantConfig['limits'] = {}) =>
  new TenantPolicy({ name: 't', endpoints: ['*'], tools: { allow: ['public', { match: 'secret', scopes: ['admin'] }], deny: [] }, resources: { allow: ['*'], deny: [] }, prompts: { allow: ['*'], deny: [] }, limits, arguments: [], confirm: [] } as TenantConfig);
const principal = (...scopes: string[]): Principal => ({ issuer: 'i', subject: 's', tenant: 't', scopes: new Set(scopes) });

function guardOf(p: Principal, t = tenant()): SessionGuard {
  return new SessionGuard(p, t, { counters: new MemoryLimitCounters(), slots: new MemorySessionSlots() }, undefined, { session: 'sess', endpoint: '/mcp' });
}

describe('SessionGuard.as', () => {
  it("judges by its own principal's scopes, whatever the session's guard is refreshed to", () => {
    const session = guardOf(principal('admin'));
    const narrow = session.as(principal());
    session.refresh(principal('admin'));
    assert.equal(narrow.allowsTool('secret'), false);
    assert.equal(session.allowsTool('secret'), true);
    assert.deepEqual(narrow.filterList('tools/list', { tools: [{ name: 'public' }, { name: 'secret' }] }), { tools: [{ name: 'public' }] });
  });

  it("follows the session's retarget and shares its concurrent-request slots", async () => {
    const session = guardOf(principal(), tenant({ concurrentRequests: 1 }));
    const view = session.as(principal('admin'));
    assert.equal(await view.acquireRequest(1), true);
    assert.equal(await session.acquireRequest(2), false, 'one slot for the session, whichever guard took it');
    view.releaseRequest(1);
    session.retarget(tenant({ concurrentRequests: 2 }));
    assert.equal(view.tenant.config.limits.concurrentRequests, 2);
  });
});

describe('GuardViews', () => {
  it('one view per set of scopes: the same token or the same scopes build nothing, other scopes their own', () => {
    const built: Principal[] = [];
    const views = new GuardViews((p) => (built.push(p), { scopes: [...p.scopes] }));
    const a = principal('read');
    const first = views.for(a);
    assert.equal(views.for(a), first);
    assert.equal(views.for(principal('read')), first, 'another token with the same scopes');
    const wide = views.for(principal('read', 'admin'));
    assert.deepEqual(wide, { scopes: ['read', 'admin'] });
    assert.equal(views.for(a), first, 'the first token finds its view again');
    assert.equal(built.length, 2);
  });
});
