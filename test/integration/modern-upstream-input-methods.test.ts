// A 2026-07-28 upstream's input_required is the era's answer to tools/call, prompts/get and resources/read
// alone, and its input requests are elicitation/create, sampling/createMessage or roots/list alone (schema
// 2026-07-28: InputRequest, and the three results that may be an InputRequiredResult). One that breaks either
// rule is the gateway's upstream failure (SWB_UPSTREAM_PROTOCOL, the upstream named), and nothing of it is put
// to the client: before 2026-12-07 a completion/complete's round was put to a 2025 client as elicitation, and
// an ask of another method (ping) went to it as it came, round after round.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { startModernServer } from '../helpers/modern-server.js';
import { connectClient } from '../helpers/sdk.js';
import { MAX_ASKING } from '../../src/upstream/upstream-client.js';

const ELICIT = { method: 'elicitation/create', params: { message: 'Which one?', requestedSchema: { type: 'object', properties: { v: { type: 'string' } } } } };
const ANSWER = {
  'completion/complete': { resultType: 'input_required', inputRequests: { which: ELICIT } },
  'tools/call test_simple_text': { resultType: 'input_required', inputRequests: { alive: { method: 'ping', params: {} } } },
  'tools/call test_image_content': { resultType: 'input_required', inputRequests: { big: { method: `x/${'m'.repeat(20_000)}`, params: {} } } },
  // More questions in one round than the gateway puts to a client at once (MAX_ASKING), every round.
  'tools/call test_logging_tool': { resultType: 'input_required', inputRequests: Object.fromEntries(Array.from({ length: MAX_ASKING + 1 }, (_, i) => [`q${i}`, ELICIT])) },
};

describe('a 2026-07-28 upstream asking for input where the era allows none', () => {
  let upstream: { child: ChildProcess; url: URL };
  let gw: RunningGateway;
  let client: Client;
  let elicited = 0;
  before(async () => {
    upstream = await startModernServer({ MODERN_FIXTURE_ANSWER: JSON.stringify(ANSWER) });
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [{ name: 'modern', transport: 'streamable-http', url: upstream.url.href, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['modern'] }],
    });
    client = await connectClient(gw, 'streamable-http');
    client.setRequestHandler(ElicitRequestSchema, async () => {
      elicited++;
      return { action: 'accept', content: { v: 'x' } };
    });
  });
  after(async () => {
    await client?.close();
    await gw.close();
    upstream.child.kill('SIGTERM');
  });

  const refusal = (e: unknown) => e as { code?: number; message?: string; data?: Record<string, unknown> };

  it('input_required to completion/complete: an upstream protocol error naming it, the 2025 client asked nothing', async () => {
    const ref = { type: 'ref/prompt', name: 'test_prompt_with_arguments' } as const;
    const err = refusal(await client.complete({ ref, argument: { name: 'arg1', value: 'a' } }).then(() => undefined, (e: unknown) => e));
    assert.equal(err?.code, -32000, JSON.stringify(err));
    assert.equal(err.data?.code, 'SWB_UPSTREAM_PROTOCOL');
    assert.equal(err.data?.upstream, 'modern');
    assert.match(err.message ?? '', /upstream "modern" answered completion\/complete with input_required/);
    assert.equal(elicited, 0, 'the elicitation was not put to the client');
  });

  it('the same for a 2026-07-28 client: no input round, the upstream failure', async () => {
    const caps = { elicitation: { form: {} } };
    const a = await modernPost(gw.url(), 'completion/complete', { ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'a' } }, { caps });
    assert.equal(a.body.result, undefined, JSON.stringify(a.body));
    assert.equal(a.body.error?.data?.code, 'SWB_UPSTREAM_PROTOCOL', JSON.stringify(a.body));
  });

  it('an input request of a method no round may carry (ping): an upstream protocol error naming it, never put to the client', async () => {
    const err = refusal(await client.callTool({ name: 'test_simple_text', arguments: {} }).then(() => undefined, (e: unknown) => e));
    assert.equal(err?.code, -32000, JSON.stringify(err));
    assert.equal(err.data?.code, 'SWB_UPSTREAM_PROTOCOL');
    assert.equal(err.data?.upstream, 'modern');
    assert.match(err.message ?? '', /upstream "modern" asked the client "ping"/);
  });

  it('an oversized method asked for: quoted cut in the message the client receives, as in the log', async () => {
    const err = refusal(await client.callTool({ name: 'test_image_content', arguments: {} }).then(() => undefined, (e: unknown) => e));
    assert.equal(err.data?.code, 'SWB_UPSTREAM_PROTOCOL', String(err.message).slice(0, 500));
    assert.match(err.message ?? '', /upstream "modern" asked the client "x\/m+… in an input round/);
    assert.ok((err.message ?? '').length < 1_000, `a message of ${err.message?.length} characters`);
  });

  it('a round of more input requests than MAX_ASKING: an upstream protocol error saying so, none put to the client', async () => {
    const err = refusal(await client.callTool({ name: 'test_logging_tool', arguments: {} }).then(() => undefined, (e: unknown) => e));
    assert.equal(err?.code, -32000, JSON.stringify(err).slice(0, 500));
    assert.equal(err.data?.code, 'SWB_UPSTREAM_PROTOCOL');
    assert.match(err.message ?? '', new RegExp(`upstream "modern" asked the client ${MAX_ASKING + 1} questions in one input round \\(at most ${MAX_ASKING} are relayed\\)`));
    assert.equal(elicited, 0, 'no elicitation was put to the client');
  });
});
