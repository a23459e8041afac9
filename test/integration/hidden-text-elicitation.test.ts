// An upstream's elicitation (elicitation/create) is text a client renders for its user, or hands to its
// model: before 2026-12-06 relayed unscanned, so an outside image in its message, a bidi override in a
// field's description or tag characters passed whatever hidden-text scanning said. Now scanned with the
// results' action: relayed as it is (audit), cleaned (strip), or refused to the upstream (block).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { gatewayWithClients } from '../helpers/gateway-clients.js';
import { HIDDEN_TEXT, HIDDEN_TEXT_UPSTREAM, RESULTS_ENDPOINTS } from '../helpers/hidden-text-fixture.js';
import { textOf } from '../helpers/sdk.js';

type Json = Record<string, any>;
const F = HIDDEN_TEXT;

describe('hidden-text scanning of elicitation requests', () => {
  const { lines, clients } = gatewayWithClients({
    upstreams: [HIDDEN_TEXT_UPSTREAM],
    endpoints: RESULTS_ENDPOINTS,
  });
  /** What each endpoint's client was asked (message, the field's description), and what the tool said of it. */
  const asked: Record<string, Array<[string, string]>> = {};
  const ask = async (path: string, kind: string) => {
    const c = clients[path]!;
    c.setRequestHandler(ElicitRequestSchema, async (req) => {
      const p = req.params as Json;
      (asked[path] ??= []).push([p.message, p.requestedSchema.properties.ok.description]);
      return { action: 'decline' };
    });
    return textOf(await c.callTool({ name: 'reply', arguments: { kind, where: 'elicitation' } }));
  };
  const audited = (path: string) => lines.map((l) => JSON.parse(l) as Json).filter((l) => l.event === 'hidden_text' && l.endpoint === path && l.item === 'elicitation');

  // Its message opened by the upstream that asks (never the gateway's voice: upstream-elicitation-voice).
  const BY = 'Upstream "ht" asks: ';

  it('off and audit relay it as it is; audit writes a line naming each field', async () => {
    assert.equal(await ask('/off', 'tag'), 'elicitation answered: decline');
    assert.deepEqual(asked['/off'], [[BY + F.samples.tag, F.samples.tag]]);
    assert.equal(await ask('/audit', 'bidi'), 'elicitation answered: decline');
    assert.deepEqual(asked['/audit'], [[BY + F.samples.bidi, F.samples.bidi]]);
    assert.deepEqual(audited('/audit').map((l) => [l.action, l.upstream, l.name, l.findings.map((f: Json) => `${f.kind} ${f.path}`)]), [['audit', 'ht', 'elicitation/create', ['bidi message', 'bidi requestedSchema.properties.ok.description']]]);
  });

  it('strip relays it cleaned; block refuses it to the upstream and asks the user nothing', async () => {
    assert.equal(await ask('/strip', 'tag'), 'elicitation answered: decline');
    assert.deepEqual(asked['/strip'], [[`${BY}Sunny, 21 degrees.`, 'Sunny, 21 degrees.']]);
    assert.equal(await ask('/block', 'invisible'), 'elicitation refused: -32000 SWB_HIDDEN_TEXT_BLOCKED');
    assert.equal(asked['/block'], undefined);
    assert.equal(await ask('/block', 'none'), 'elicitation answered: decline');
  });
});
