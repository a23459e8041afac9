// Confirmation rules (tenants[].confirm) in the 2026-07-28 era: a modern tools/call a rule matches is
// answered input_required with the confirmation's elicitation and a sealed requestState; only the
// retry that echoes that state (same principal, method, tool and arguments digest; single use) can
// answer it. Through the official SDK v2 client pinned to 2026-07-28 (accept, decline, cancel, timeout,
// no elicitation capability) and raw POSTs for what a well-behaved client never sends (a tampered,
// replayed or re-targeted state, answers brought along on a first call). The recording stdio server's
// own record of calls is the proof of what reached the upstream.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { assertStateRefused, inputRound, modernPost } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

type Json = Record<string, any>;

const recorder = { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };
const TOKEN = 'ghp_' + 'Zx81Qw'.repeat(6);
const ARGS = { repo: 'acme/site', token: TOKEN };
const CALL = { name: 'fs__delete_repo', arguments: ARGS };
const ACCEPT = { action: 'accept', content: { confirm: true } };

type Answer = (params: Json) => Promise<Json>;

function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('confirmation rules in the 2026-07-28 era', { timeout: 120_000 }, () => {
  let gw: RunningGateway;
  let watcher: Client;
  const clients: Array<{ close(): Promise<void> }> = [];
  const logLines: string[] = [];

  const upstreamCalls = async (): Promise<Json[]> => JSON.parse(textOf(await watcher.callTool({ name: 'fs__calls', arguments: {} })));
  const audit = (): Json[] => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit' && l.name === 'fs__delete_repo');
  const confirmations = async (outcome: string) => sample(await (await fetch(gw.app.metricsUrl!)).text(), 'switchboard_confirmations_total', { tenant: 'anonymous', outcome });
  const post = (params: Json, caps?: Json) => modernPost(gw.url(), 'tools/call', params, caps ? { caps } : {});

  /** An SDK v2 client pinned to 2026-07-28; with `elicits` it declares form elicitation and answers with `answer`. */
  const connect = async (elicits = true, path = '/mcp') => {
    const client = new ModernClient({ name: 'confirm-modern-test', version: '1.0.0' }, { capabilities: elicits ? { elicitation: { form: {} } } : {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const c = { client, asked: [] as Json[], answer: (async () => ACCEPT) as Answer };
    if (elicits) {
      client.setRequestHandler('elicitation/create', async (req) => {
        c.asked.push(req.params as Json);
        return (await c.answer(req.params as Json)) as never;
      });
    }
    clients.push(client);
    await client.connect(new ModernTransport(gw.url(path)));
    assert.equal(client.getProtocolEra(), 'modern');
    return c;
  };

  /** The error a refused modern call threw (the SDK keeps the JSON-RPC code and data). */
  const refusal = async (client: ModernClient, params: Json = CALL): Promise<{ code: number; data: Json; message: string }> => {
    const err = await client.callTool(params as never).then(
      (r) => assert.fail(`the call was answered: ${JSON.stringify(r)}`),
      (e: unknown) => e as { code: number; data: Json; message: string },
    );
    return err;
  };

  before(async () => {
    gw = await startGateway(
      {
        upstreams: [recorder],
        endpoints: [
          { path: '/mcp', upstreams: ['fs'], prefix: 'always' },
          { path: '/search', upstreams: ['fs'], prefix: 'always', tools: { exposure: 'search' } },
        ],
        tenants: [{ name: 'anonymous', endpoints: ['*'], confirm: [{ match: 'fs__delete_*', message: 'Deleting a repository cannot be undone.', timeoutMs: 1000 }] }],
      },
      { logLines },
    );
    watcher = new Client({ name: 'watcher', version: '1.0.0' }, { capabilities: {} });
    await watcher.connect(new StreamableHTTPClientTransport(gw.url()));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await watcher?.close().catch(() => {});
    await gw?.close();
  });

  it('SDK v2 accept: the input_required round is the confirmation; the retry forwards the call exactly as asked', async () => {
    const c = await connect();
    const before = (await upstreamCalls()).length;
    const result = await c.client.callTool(CALL);
    assert.equal(textOf(result), `delete_repo ${JSON.stringify(ARGS)}`);
    assert.equal(c.asked.length, 1);
    const message = String(c.asked[0]!.message);
    assert.match(message, /Deleting a repository cannot be undone\.[\s\S]*Tool: "fs__delete_repo"\nUpstream: "fs"/);
    assert.ok(!message.includes(TOKEN), 'the token is not shown');
    assert.equal(c.asked[0]!.mode, 'form');
    assert.deepEqual((await upstreamCalls()).slice(before), [{ name: 'delete_repo', arguments: ARGS }]);
    await until('the accepted call audited', () => audit().some((l) => l.outcome === 'ok' && l.confirmation === 'accepted'));
  });

  for (const [what, answer, code, outcome] of [
    ['decline', { action: 'decline' }, -32000, 'declined'],
    ['cancel', { action: 'cancel' }, -32000, 'cancelled'],
  ] as const) {
    it(`SDK v2 ${what}: a JSON-RPC error, nothing forwarded, audited and counted "${outcome}"`, async () => {
      const c = await connect();
      c.answer = async () => answer;
      const before = (await upstreamCalls()).length;
      const counted = await confirmations(outcome);
      const err = await refusal(c.client);
      assert.equal(err.code, code, JSON.stringify(err));
      assert.equal(err.data?.code, 'SWB_CONFIRMATION_DECLINED');
      assert.equal(err.data?.outcome, outcome);
      assert.equal((await upstreamCalls()).length, before);
      await until(`the ${what} audited`, () => audit().some((l) => l.rule === 'confirm:fs__delete_*' && l.confirmation === outcome));
      assert.equal(await confirmations(outcome), counted + 1);
    });
  }

  it('SDK v2 timeout: an answer after the rule\'s timeoutMs gets SWB_CONFIRMATION_TIMEOUT; nothing forwarded', async () => {
    const c = await connect();
    const counted = await confirmations('timeout');
    // The user answers only once the gateway has given up (it counts the timeout first).
    c.answer = async () => {
      await until('the confirmation timed out', async () => (await confirmations('timeout')) > counted);
      return ACCEPT;
    };
    const before = (await upstreamCalls()).length;
    const err = await refusal(c.client);
    assert.equal(err.code, -32001, JSON.stringify(err));
    assert.equal(err.data?.code, 'SWB_CONFIRMATION_TIMEOUT');
    assert.equal((await upstreamCalls()).length, before);
  });

  it('SDK v2 without the elicitation capability: -32021 naming the capability, nothing forwarded', async () => {
    const c = await connect(false);
    const before = (await upstreamCalls()).length;
    const err = await refusal(c.client);
    assert.equal(err.code, -32021, JSON.stringify(err));
    // The SDK's MissingRequiredClientCapabilityError keeps requiredCapabilities (the raw test below sees the rest of data).
    assert.deepEqual(err.data?.requiredCapabilities, { elicitation: { form: {} } });
    assert.match(err.message, /needs the user's confirmation/);
    assert.equal((await upstreamCalls()).length, before);
  });

  it('SDK v2 in search mode: call_tool asks for the tool it wraps', async () => {
    const c = await connect(true, '/search');
    c.answer = async () => ({ action: 'decline' });
    const before = (await upstreamCalls()).length;
    const err = await refusal(c.client, { name: 'call_tool', arguments: CALL });
    assert.equal(err.data?.tool, 'fs__delete_repo');
    assert.equal((await upstreamCalls()).length, before);
  });

  it('raw: the round asks "confirm" with a sealed state; a tampered state is refused, the genuine retry still completes', async () => {
    const round = inputRound(await post(CALL));
    assert.equal(round.key, 'confirm');
    assert.equal(round.method, 'elicitation/create');
    assert.match(String(round.params.message), /Tool: "fs__delete_repo"/);
    const before = (await upstreamCalls()).length;
    const [version, kid, iv, body, tag] = round.state.split('.') as [string, string, string, string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const state of [[version, kid, iv, flip(body, 3), tag].join('.'), [version, kid, iv, body, flip(tag, 0)].join('.'), `${round.state}x`, 'forged']) {
      assertStateRefused(await post({ ...CALL, inputResponses: { confirm: ACCEPT }, requestState: state }), /^(tampered|malformed)$/);
    }
    assert.equal((await upstreamCalls()).length, before, 'no tampered retry reached the upstream');
    const done = await post({ ...CALL, inputResponses: { confirm: ACCEPT }, requestState: round.state });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.result.resultType, 'complete');
    assert.deepEqual((await upstreamCalls()).slice(before), [{ name: 'delete_repo', arguments: ARGS }]);
  });

  it('raw: a replayed state is refused and the upstream sees the call once', async () => {
    const round = inputRound(await post(CALL));
    const before = (await upstreamCalls()).length;
    const retry = { ...CALL, inputResponses: { confirm: ACCEPT }, requestState: round.state };
    assert.equal((await post(retry)).status, 200);
    assertStateRefused(await post(retry), 'replayed');
    assertStateRefused(await post(retry), 'replayed');
    assert.equal((await upstreamCalls()).length, before + 1);
  });

  it('raw: the state answers only the arguments the user saw (other arguments or tool: wrong-request)', async () => {
    const round = inputRound(await post(CALL));
    const before = (await upstreamCalls()).length;
    for (const other of [{ ...CALL, arguments: { ...ARGS, repo: 'acme/everything' } }, { ...CALL, arguments: { ...ARGS, force: true } }, { name: 'fs__read_file', arguments: { path: '/x' } }]) {
      assertStateRefused(await post({ ...other, inputResponses: { confirm: ACCEPT }, requestState: round.state }), 'wrong-request');
    }
    assert.equal((await upstreamCalls()).length, before);
    const declined = await post({ ...CALL, inputResponses: { confirm: { action: 'decline' } }, requestState: round.state });
    assert.equal(declined.body.error?.code, -32000, JSON.stringify(declined.body));
    assert.equal((await upstreamCalls()).length, before);
  });

  it('raw: answers brought along on a first call are not a confirmation (only a sealed retry is)', async () => {
    const before = (await upstreamCalls()).length;
    const round = inputRound(await post({ ...CALL, inputResponses: { confirm: ACCEPT, 'elicitation-1': ACCEPT } }));
    assert.equal(round.key, 'confirm');
    assert.equal((await upstreamCalls()).length, before);
    // A retry that leaves the answer out is asked again, under a fresh state.
    const again = inputRound(await post({ ...CALL, inputResponses: {}, requestState: round.state }));
    assert.equal(again.key, 'confirm');
    assert.notEqual(again.state, round.state);
    assert.equal((await post({ ...CALL, inputResponses: { confirm: ACCEPT }, requestState: again.state })).status, 200);
    assert.equal((await upstreamCalls()).length, before + 1);
  });

  it('raw: a request that declares no elicitation gets 400 -32021', async () => {
    const r = await post(CALL, {});
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error.code, -32021);
    assert.deepEqual(r.body.error.data, { code: 'SWB_CONFIRMATION_UNSUPPORTED', rule: 'fs__delete_*', tool: 'fs__delete_repo', outcome: 'unsupported', upstream: 'fs', requiredCapabilities: { elicitation: { form: {} } } });
  });
});
