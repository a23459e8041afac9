// Completion values an upstream offers (completion/complete) are text a client shows its user and sends on
// as picked: before 2026-12-06 they passed hidden-text scanning unscanned. Now scanned with the results'
// action: audited, cleaned (strip) or refused with SWB_HIDDEN_TEXT_BLOCKED (block).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { gatewayWithClients } from '../helpers/gateway-clients.js';
import { HIDDEN_TEXT, HIDDEN_TEXT_UPSTREAM, RESULTS_ENDPOINTS } from '../helpers/hidden-text-fixture.js';

type Json = Record<string, any>;
const F = HIDDEN_TEXT;

describe('hidden-text scanning of completion values', () => {
  const { lines, clients } = gatewayWithClients({
    upstreams: [HIDDEN_TEXT_UPSTREAM],
    endpoints: RESULTS_ENDPOINTS,
  });
  const complete = (path: string, value: string) => clients[path]!.complete({ ref: { type: 'ref/resource', uri: 'note:///{kind}' }, argument: { name: 'kind', value } });
  const audited = (path: string) => lines.map((l) => JSON.parse(l) as Json).filter((l) => l.event === 'hidden_text' && l.endpoint === path && l.item === 'completion');

  it('off and audit pass the values on; audit writes a line naming the field', async () => {
    assert.deepEqual((await complete('/off', 'tag')).completion.values, ['plain', F.samples.tag]);
    assert.deepEqual((await complete('/audit', 'tag')).completion.values, ['plain', F.samples.tag]);
    const [line] = audited('/audit');
    assert.deepEqual([line?.where, line?.action, line?.name, line?.findings.map((f: Json) => [f.kind, f.path])], ['result', 'audit', 'note:///{kind}', [['tag', 'completion.values[1]']]]);
  });

  it('strip cleans the values; block refuses them with SWB_HIDDEN_TEXT_BLOCKED; clean values pass', async () => {
    assert.deepEqual((await complete('/strip', 'tag')).completion.values, ['plain', 'Sunny, 21 degrees.']);
    let refused: unknown;
    try {
      await complete('/block', 'bidi');
    } catch (err) {
      refused = err;
    }
    assert.ok(refused instanceof McpError, String(refused));
    assert.equal(refused.code, -32000);
    assert.equal((refused.data as Json).code, 'SWB_HIDDEN_TEXT_BLOCKED');
    assert.match(refused.message, /The completion values for note:\/\/\/\{kind\} were withheld by the gateway: hidden text \(bidi\)/);
    assert.deepEqual((await complete('/block', '')).completion.values.length, 5);
  });
});
