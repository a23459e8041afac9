// shownEmbedded: the resources a tool result or prompt embeds or links, as a tenant's resource rules let them
// through (the real TenantPolicy and SessionGuard judge; the gateway end to end is in
// integration/embedded-resource-policy).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TenantConfig } from '../../../src/config/schema.js';
import { shownEmbedded } from '../../../src/policy/embedded-resources.js';
import { MemoryLimitCounters } from '../../../src/policy/limit-counters.js';
import { MemorySessionSlots } from '../../../src/policy/session-slots.js';
import { SessionGuard } from '../../../src/policy/session-guard.js';
import { ALLOW_ALL, TenantPolicy } from '../../../src/policy/tenant-policy.js';

const DENIED = 'file:///secrets/key.txt';
const SHOWN = 'file:///docs/a.txt';

function guardOf(config: TenantConfig): SessionGuard {
  const principal = { issuer: 'i', subject: 's', tenant: config.name, scopes: new Set<string>() };
  return new SessionGuard(principal, new TenantPolicy(config), { counters: new MemoryLimitCounters(), slots: new MemorySessionSlots() }, undefined, { session: 's', endpoint: '/mcp' });
}
const denying = guardOf({ ...ALLOW_ALL, name: 't', resources: { allow: ['*'], deny: ['file:///secrets/*'] } } as TenantConfig);
const embedded = (uri: unknown) => ({ type: 'resource', resource: { uri, text: 'x' } });
const link = (uri: unknown) => ({ type: 'resource_link', uri, name: 'n' });

describe('shownEmbedded', () => {
  it('tools/call: embedded resources and links under a denied URI are left out, in order; others and unjudgeable items kept', () => {
    const content = [{ type: 'text', text: 't' }, embedded(DENIED), embedded(SHOWN), link(DENIED), link(SHOWN), link(undefined), { type: 'resource' }];
    const r = shownEmbedded(denying, 'tools/call', { content, isError: false });
    assert.deepEqual(r, { content: [content[0], content[2], content[4], content[5], content[6]], isError: false });
  });

  it('a URI in no normal form is left out, as a read of it is refused', () => {
    const r = shownEmbedded(denying, 'tools/call', { content: [link('FILE:///docs/a.txt'), link('file:///docs/../secrets/key.txt')] });
    assert.deepEqual(r.content, []);
  });

  it('a result with nothing withheld is the same object, not a copy', () => {
    const tool = { content: [{ type: 'text', text: 't' }, embedded(SHOWN), link(SHOWN)] };
    assert.equal(shownEmbedded(denying, 'tools/call', tool), tool);
    const prompt = { messages: [{ role: 'user', content: embedded(SHOWN) }, { role: 'user', content: [link(SHOWN)] }] };
    assert.equal(shownEmbedded(denying, 'prompts/get', prompt), prompt);
    const structured = { structuredContent: { uri: DENIED } };
    assert.equal(shownEmbedded(denying, 'tools/call', structured), structured, 'structured content is not judged (no content item names a resource)');
  });

  it('a tenant whose rules filter nothing is shown everything, uncopied', () => {
    const open = guardOf(ALLOW_ALL);
    const tool = { content: [embedded(DENIED)] };
    assert.equal(shownEmbedded(open, 'tools/call', tool), tool);
  });

  it('prompts/get: a message whose one item is withheld is left out; an array of items keeps what is shown, or goes when none is', () => {
    const messages = [
      { role: 'user', content: { type: 'text', text: 'hi' } },
      { role: 'user', content: embedded(DENIED) },
      { role: 'assistant', content: [link(DENIED), link(SHOWN)] },
      { role: 'user', content: [embedded(DENIED), link(DENIED)] },
      { role: 'user', content: link(SHOWN) },
    ];
    const r = shownEmbedded(denying, 'prompts/get', { description: 'd', messages });
    assert.deepEqual(r, { description: 'd', messages: [messages[0], { role: 'assistant', content: [link(SHOWN)] }, messages[4]] });
  });
});
