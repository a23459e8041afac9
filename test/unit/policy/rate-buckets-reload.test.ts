// The memory store's request-rate buckets across a reload (found by a review): a tenant removed (or its
// requestsPerSecond) kept its bucket for the process's life, so tenants churned through reloads grew the
// gateway's memory for ever, and a tenant added back under the same name found its old bucket drained.
// Now a reload drops the buckets of tenants that no longer have a rate.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../../../src/auth/principal.js';
import { parseConfig } from '../../../src/config/load.js';
import { MemoryLimitCounters, MemorySessionSlots, Policy } from '../../../src/policy/index.js';

type Tenant = { name: string; limits?: Record<string, number> };

function config(tenants: Tenant[]) {
  return parseConfig({
    auth: { mode: 'none' },
    tenants: tenants.map((t) => ({ endpoints: ['*'], ...t })),
    upstreams: [{ name: 'u', transport: 'stdio', command: 'never-run' }],
    endpoints: [{ path: '/mcp', upstreams: ['u'] }],
  });
}

const as = (tenant: string) => ({ tenant, subject: 's' }) as unknown as Principal;
const RATE = { requestsPerSecond: 0.01, burst: 1 };

describe('request-rate buckets in memory and reloads', () => {
  it('drops the bucket of a tenant removed, or whose rate was removed, at the reload', () => {
    const counters = new MemoryLimitCounters();
    const policy = new Policy(config([{ name: 'a', limits: RATE }, { name: 'b', limits: RATE }]), counters, new MemorySessionSlots());
    assert.equal(policy.admit(as('a')), 0);
    assert.equal(policy.admit(as('b')), 0);
    assert.ok(Number(policy.admit(as('a'))) > 0, "a's one token is spent");
    assert.equal(counters.buckets, 2);

    policy.replace(config([{ name: 'b', limits: RATE }]));
    assert.equal(counters.buckets, 1, 'the removed tenant\'s bucket is gone');
    assert.ok(Number(policy.admit(as('b'))) > 0, 'a tenant kept keeps its bucket');

    policy.replace(config([{ name: 'b', limits: { concurrentRequests: 4 } }]));
    assert.equal(counters.buckets, 0, 'a tenant whose rate was removed has no bucket');

    policy.replace(config([{ name: 'a', limits: RATE }, { name: 'b', limits: RATE }]));
    assert.equal(policy.admit(as('a')), 0, 'a tenant added back starts with a full bucket');
  });
});
