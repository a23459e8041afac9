// Hidden text in many fields of one answer: every field was a finding with its whole path, on the audit
// line, in the SWB_HIDDEN_TEXT_BLOCKED error and in the walk's memory, so a hostile upstream's few kB
// (one zero-width space per field, under long member names) became megabytes of log per call.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { gatewayWithClients } from '../helpers/gateway-clients.js';

type Json = Record<string, any>;

const UPSTREAM = { name: 'many', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/hidden-many-server.mjs')], sandbox: 'none' as const, sharing: 'shared' as const };
const scanning = (action: 'audit' | 'block') => ({ guardrails: { hiddenText: { definitions: 'off' as const, results: action } } });
const FIELDS = 2000;
const DEPTH = 40;

async function invisibleFields(gw: RunningGateway, action: string): Promise<number> {
  const text = await (await fetch(gw.app.metricsUrl!)).text();
  const m = new RegExp(`^switchboard_hidden_text_findings_total\\{kind="invisible",where="result",action="${action}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('hidden-text findings of one answer are bounded', () => {
  const rig = gatewayWithClients({
    upstreams: [UPSTREAM],
    endpoints: [
      { path: '/audit', upstreams: ['many'], ...scanning('audit') },
      { path: '/block', upstreams: ['many'], ...scanning('block') },
    ],
  });
  const { lines, clients } = rig;

  it('audit: the line lists the first fields and sums up the rest; the metric still counts every field', async () => {
    await clients['/audit']!.callTool({ name: 'many', arguments: { fields: FIELDS, depth: DEPTH } });
    const raw = lines.filter((l) => l.includes('"event":"hidden_text"')).pop()!;
    assert.ok(raw.length < 64 * 1024, `an audit line of ${raw.length} bytes for an answer of ${FIELDS * 6 + DEPTH * 64} bytes`);
    const line = JSON.parse(raw) as Json;
    const counted = (line.findings as Json[]).reduce((n, f) => n + (f.fields ?? 1), 0);
    assert.equal(counted, FIELDS, 'the findings account for every field');
    assert.equal((line.findings as Json[]).reduce((n, f) => n + f.count, 0), FIELDS, 'and every character');
    assert.equal(await invisibleFields(rig.gw, 'audit'), FIELDS);
  });

  it('block: the error the client gets is bounded the same way', async () => {
    let err: unknown;
    try {
      await clients['/block']!.callTool({ name: 'many', arguments: { fields: FIELDS, depth: DEPTH } });
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof McpError, String(err));
    assert.match(err.message, /hidden text \(invisible\)/);
    const size = JSON.stringify(err.data).length;
    assert.ok(size < 64 * 1024, `an error of ${size} bytes`);
    assert.equal(await invisibleFields(rig.gw, 'block'), FIELDS);
  });
});
