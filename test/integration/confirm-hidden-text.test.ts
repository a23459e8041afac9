// Confirmation rules meet hidden-text scanning of definitions (found by a review): a tool the screen
// withholds (block; strip where nothing clean can be made of it) is answered "not found" as any unknown
// tool is, and the user is never asked to approve a call that cannot happen (of a poisoned tool, at
// that). A tool the screen shows (clean, or cleaned by strip) is still asked about. Both eras: SDK v1
// on Streamable HTTP (elicitation/create on the call's stream), SDK v2 pinned to 2026-07-28 and raw
// POSTs (an input_required round), and call_tool of a search-mode endpoint. The hostile stdio fixture
// (test/fixtures/hidden-text-server.mjs) answers "done" to any call of its hidden tools.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

type Json = Record<string, any>;

const UPSTREAM = { name: 'ht', transport: 'stdio' as const, command: process.execPath, args: [resolve('test/fixtures/hidden-text-server.mjs')], sandbox: 'none' as const, sharing: 'shared' as const };
/** An upstream that never starts: no view of its tools can be made. */
const DOWN = { name: 'down', transport: 'stdio' as const, command: process.execPath, args: ['-e', 'process.exit(1)'], sandbox: 'none' as const, sharing: 'shared' as const };
const scanning = (action: 'strip' | 'block') => ({ guardrails: { hiddenText: { definitions: action, results: 'off' as const } } });
const ACCEPT = { action: 'accept', content: { confirm: true } };

describe('confirmation rules and tools hidden-text scanning withholds', { timeout: 120_000 }, () => {
  let gw: RunningGateway;
  const logLines: string[] = [];
  const closing: Array<{ close(): Promise<void> }> = [];
  const audit = (endpoint: string, name: string): Json[] => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit' && l.endpoint === endpoint && l.name === name);

  before(async () => {
    gw = await startGateway(
      {
        upstreams: [UPSTREAM, DOWN],
        endpoints: [
          { path: '/down', upstreams: ['down'], prefix: 'always', ...scanning('block') },
          { path: '/block', upstreams: ['ht'], prefix: 'always', ...scanning('block') },
          { path: '/strip', upstreams: ['ht'], prefix: 'always', ...scanning('strip') },
          { path: '/search', upstreams: ['ht'], prefix: 'always', tools: { exposure: 'search' }, ...scanning('block') },
        ],
        // Every tool of the upstream is asked about (auth mode none: the caller is tenant "anonymous").
        tenants: [{ name: 'anonymous', endpoints: ['*'], confirm: [{ match: 'ht__*', timeoutMs: 5000 }, { match: 'down__*', timeoutMs: 5000 }] }],
      },
      { logLines },
    );
  });
  after(async () => {
    await Promise.all(closing.map((c) => c.close().catch(() => {})));
    await gw?.close();
  });

  /** An SDK v1 client declaring form elicitation that gives every question `answer`, and the questions it was put. */
  const legacy = async (path: string, answer: Json = ACCEPT) => {
    const client = new Client({ name: 'confirm-hidden-text', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const asked: Json[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return answer as never;
    });
    closing.push(client);
    await client.connect(new StreamableHTTPClientTransport(gw.url(path)));
    return { client, asked };
  };

  /** The same in the 2026-07-28 era (SDK v2, pinned). */
  const modern = async (path: string) => {
    const client = new ModernClient({ name: 'confirm-hidden-text-modern', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const asked: Json[] = [];
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params as Json);
      return ACCEPT as never;
    });
    closing.push(client);
    await client.connect(new ModernTransport(gw.url(path)));
    assert.equal(client.getProtocolEra(), 'modern');
    return { client, asked };
  };

  const rejection = async (p: Promise<unknown>): Promise<Error & { code: number }> =>
    p.then(
      (r) => assert.fail(`the call was answered: ${JSON.stringify(r)}`),
      (e: unknown) => e as Error & { code: number },
    );

  it('SDK v1, block: a withheld tool is "not found" without a question; the audit names the screen, not a confirmation', async () => {
    const { client, asked } = await legacy('/block');
    const err = await rejection(client.callTool({ name: 'ht__hidden_tag', arguments: {} }));
    assert.equal(err.code, -32602, String(err));
    assert.equal(err.message, 'MCP error -32602: Tool ht__hidden_tag not found');
    assert.equal(asked.length, 0, 'the user is not asked about a call that cannot happen');
    await until('the refusal audited', () => audit('/block', 'ht__hidden_tag').length > 0);
    const [line] = audit('/block', 'ht__hidden_tag');
    assert.equal(line!.rule, 'guardrails.hiddenText.definitions');
    assert.equal(line!.confirmation, undefined);
    // A tool the screen shows is still put to the user, and runs once accepted.
    assert.equal(textOf(await client.callTool({ name: 'ht__reply', arguments: { kind: 'none' } })), 'Sunny, 21 degrees.');
    assert.equal(asked.length, 1);
    assert.match(String(asked[0]!.message), /Tool: "ht__reply"/);
  });

  it('SDK v1, a client that cannot be asked: a withheld tool is "not found", not "needs confirmation"', async () => {
    const client = new Client({ name: 'confirm-hidden-text-mute', version: '1.0.0' }, { capabilities: {} });
    closing.push(client);
    await client.connect(new StreamableHTTPClientTransport(gw.url('/block')));
    const err = await rejection(client.callTool({ name: 'ht__hidden_bidi', arguments: {} }));
    assert.equal(err.message, 'MCP error -32602: Tool ht__hidden_bidi not found');
  });

  it('SDK v1: where no view of the tools can be made (its upstream down), the user is still asked', async () => {
    const { client, asked } = await legacy('/down', { action: 'decline' });
    const err = await rejection(client.callTool({ name: 'down__anything', arguments: {} }));
    assert.equal((err as Error & { data?: Json }).data?.code, 'SWB_CONFIRMATION_DECLINED', String(err));
    assert.equal(asked.length, 1);
  });

  it('SDK v1, strip: a tool stripped clean is asked about; one nothing clean can be made of is not', async () => {
    const { client, asked } = await legacy('/strip');
    assert.equal(textOf(await client.callTool({ name: 'ht__hidden_tag', arguments: {} })), 'done');
    assert.equal(asked.length, 1);
    const err = await rejection(client.callTool({ name: 'ht__hidden_property', arguments: {} }));
    assert.equal(err.message, 'MCP error -32602: Tool ht__hidden_property not found');
    assert.equal(asked.length, 1, 'no question about the withheld tool');
  });

  it('SDK v1, search mode: call_tool of a withheld tool is "not found" without a question', async () => {
    const { client, asked } = await legacy('/search');
    const err = await rejection(client.callTool({ name: 'call_tool', arguments: { name: 'ht__hidden_tag', arguments: {} } }));
    assert.match(err.message, /Tool ht__hidden_tag not found/);
    assert.equal(asked.length, 0, 'no question');
  });

  it('SDK v2 (2026-07-28), block: no input_required round for a withheld tool, only "not found"', async () => {
    const { client, asked } = await modern('/block');
    const err = await rejection(client.callTool({ name: 'ht__hidden_invisible', arguments: {} }));
    assert.equal(err.code, -32602, JSON.stringify(err));
    assert.match(err.message, /Tool ht__hidden_invisible not found/);
    assert.equal(asked.length, 0, 'no question');
    assert.equal(textOf(await client.callTool({ name: 'ht__reply', arguments: { kind: 'none' } })), 'Sunny, 21 degrees.');
    assert.equal(asked.length, 1, 'a tool the screen shows is still asked about');
  });

  it('raw 2026-07-28: the first answer for a withheld tool is the error itself, not a confirmation round', async () => {
    const withheldTool = await modernPost(gw.url('/block'), 'tools/call', { name: 'ht__hidden_bidi', arguments: { path: '/x' } });
    assert.equal(withheldTool.body.error?.code, -32602, JSON.stringify(withheldTool.body));
    assert.equal(withheldTool.body.error.message, 'Tool ht__hidden_bidi not found');
    const shown = inputRound(await modernPost(gw.url('/block'), 'tools/call', { name: 'ht__reply', arguments: { kind: 'none' } }));
    assert.equal(shown.key, 'confirm');
  });
});
