// A resource template named by a connection string (`note://app:s3cret@db/{kind}`: servers name resources
// so, README "Audit log") is a URI too: on a hidden-text line, for a finding in its definition or in the
// completion values offered for it, its password is replaced, as a resource's is on every audit line. Before,
// both lines carried the upstream's database password to whoever reads the audit log (found by a review).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayWithClients } from '../helpers/gateway-clients.js';
import { HIDDEN_TEXT, HIDDEN_TEXT_UPSTREAM } from '../helpers/hidden-text-fixture.js';

type Json = Record<string, any>;

describe('hidden-text lines of a template whose URI holds a password', () => {
  const { lines, clients } = gatewayWithClients({
    audit: { enabled: true },
    upstreams: [{ ...HIDDEN_TEXT_UPSTREAM, args: [...HIDDEN_TEXT_UPSTREAM.args, '--credential-template'] }],
    endpoints: [{ path: '/audit', upstreams: ['ht'], guardrails: { hiddenText: { definitions: 'audit', results: 'audit', patterns: [HIDDEN_TEXT.pattern] } } }],
  });
  const hidden = () => lines.map((l) => JSON.parse(l) as Json).filter((l) => l.event === 'hidden_text');

  it('name it with the password replaced, for its definition and for its completion values', async () => {
    const c = clients['/audit']!;
    const listed = (await c.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    assert.ok(listed.includes('note://app:s3cret@db/{kind}'), JSON.stringify(listed));
    const values = (await c.complete({ ref: { type: 'ref/resource', uri: 'note://app:s3cret@db/{kind}' }, argument: { name: 'kind', value: 'tag' } })).completion.values;
    assert.deepEqual(values, ['plain', HIDDEN_TEXT.samples.tag]);
    const named = hidden().filter((l) => String(l.name).startsWith('note://app'));
    assert.deepEqual(
      named.map((l) => [l.where, l.item, l.name]),
      [
        ['definition', 'template', 'note://app:[redacted]@db/{kind}'],
        ['result', 'completion', 'note://app:[redacted]@db/{kind}'],
      ],
    );
    assert.ok(!lines.some((l) => l.includes('s3cret')), lines.filter((l) => l.includes('s3cret')).join('\n'));
  });
});
