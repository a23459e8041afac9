// Confirmation rules (tenants[].confirm) in the 2025 session era, through the official SDK v1 client on
// Streamable HTTP and on legacy HTTP+SSE, a raw 2025-03-26 batch, an unprefixed endpoint and the
// search-mode meta-tool call_tool. A destructive tool of the recording stdio server
// (test/fixtures/recording-server.mjs) sits behind a rule: the gateway puts elicitation/create to the
// client on the call's own stream; accept forwards the call exactly as shown, decline / cancel /
// timeout / a client without the elicitation capability answer a coded JSON-RPC error, and the
// upstream's own record of calls shows nothing arrived. Each outcome has its audit line and is counted
// in switchboard_confirmations_total.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { initializeBody, post, type Json } from '../helpers/http-edge.js';
import { textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const recorder = { name: 'fs', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/recording-server.mjs'], sandbox: 'none' as const, sharing: 'shared' as const };

const CONFIRM_RULES = [
  { match: 'fs__delete_*', message: 'Deleting a repository cannot be undone.', timeoutMs: 1000 },
  // Moves into the scratch area need no question; elsewhere a client that cannot ask may still move.
  { match: 'fs__move_file', when: { paths: { arguments: ['destination'], notUnder: ['/tmp/scratch'] } }, ifUnsupported: 'allow' as const },
];

/** The arguments every test sends: a secret-looking token the user must not be shown, and the upstream must receive. */
const TOKEN = 'ghp_' + 'Zx81Qw'.repeat(6);
const ARGS = { repo: 'acme/site', token: TOKEN };

type Answer = (req: ElicitRequest, signal: AbortSignal) => Promise<ElicitResult>;

interface Connected {
  client: Client;
  /** The elicitation requests this client was put. */
  asked: Array<ElicitRequest['params']>;
  /** The JSON-RPC ids those requests came with. */
  ids: Array<string | number>;
  /** How it answers the next ones (a test replaces it). */
  answer: Answer;
}

const accept: Answer = async () => ({ action: 'accept', content: { confirm: true } });

/** An SDK v1 client; with `elicits` it declares form elicitation and answers with `answer`. */
async function connect(gw: RunningGateway, o: { sse?: boolean; path?: string; elicits?: boolean } = {}): Promise<Connected> {
  const elicits = o.elicits ?? true;
  const client = new Client({ name: 'confirm-test', version: '1.0.0' }, { capabilities: elicits ? { elicitation: { form: {} } } : {} });
  const c: Connected = { client, asked: [], ids: [], answer: accept };
  if (elicits) {
    client.setRequestHandler(ElicitRequestSchema, (req, extra) => {
      c.asked.push(req.params);
      c.ids.push(extra.requestId);
      return c.answer(req, extra.signal);
    });
  }
  const path = o.path ?? '/mcp';
  await client.connect(o.sse ? new SSEClientTransport(gw.url(path === '/mcp' ? '/sse' : `${path}/sse`)) : new StreamableHTTPClientTransport(gw.url(path)));
  return c;
}

/** The wire error of a refused call (McpError keeps code and data). */
async function refused(c: Connected, name: string, args: Json = ARGS): Promise<McpError> {
  const err = await c.client.callTool({ name, arguments: args }).then(
    (r) => assert.fail(`the call was answered: ${JSON.stringify(r)}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof McpError, String(err));
  return err;
}

function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('confirmation rules in the 2025 session era (SDK v1)', { timeout: 120_000 }, () => {
  let gw: RunningGateway;
  let watcher: Connected;
  const logLines: string[] = [];

  /** Every tools/call the recording server has received (asked through a client on a path no rule covers). */
  const upstreamCalls = async (): Promise<Array<{ name: string; arguments: Json }>> => JSON.parse(textOf(await watcher.client.callTool({ name: 'fs__calls', arguments: {} })));
  const audit = (): Json[] => logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit' && l.name !== 'fs__calls' && l.name !== 'calls');
  const confirmations = async (outcome: string) => sample(await (await fetch(gw.app.metricsUrl!)).text(), 'switchboard_confirmations_total', { tenant: 'anonymous', outcome });

  before(async () => {
    gw = await startGateway(
      {
        upstreams: [recorder],
        endpoints: [
          { path: '/mcp', upstreams: ['fs'], prefix: 'always' },
          { path: '/solo', upstreams: ['fs'] },
          { path: '/search', upstreams: ['fs'], prefix: 'always', tools: { exposure: 'search' } },
        ],
        // auth mode none: every caller is tenant "anonymous", whose rules these are.
        tenants: [{ name: 'anonymous', endpoints: ['*'], confirm: CONFIRM_RULES }],
      },
      { logLines },
    );
    watcher = await connect(gw, { elicits: false });
  });
  after(async () => {
    await watcher?.client.close().catch(() => {});
    await gw?.close();
  });

  it('accept: the user is shown tool, upstream and masked arguments; the call is forwarded exactly as asked', async () => {
    const c = await connect(gw);
    try {
      const before = (await upstreamCalls()).length;
      const result = await c.client.callTool({ name: 'fs__delete_repo', arguments: ARGS });
      assert.equal(textOf(result), `delete_repo ${JSON.stringify(ARGS)}`);
      assert.equal(c.asked.length, 1);
      const [params] = c.asked as [ElicitRequest['params']];
      assert.equal(params.mode, 'form');
      const message = String(params.message);
      assert.match(message, /Deleting a repository cannot be undone\./);
      assert.match(message, /Tool: "fs__delete_repo"\nUpstream: "fs"/);
      assert.match(message, /"repo": "acme\/site"/);
      assert.ok(!message.includes(TOKEN), 'the token is not shown');
      assert.match(message, /"token": "\[masked\]"/);
      assert.deepEqual((params as { requestedSchema: Json }).requestedSchema.required, ['confirm']);
      const calls = (await upstreamCalls()).slice(before);
      assert.deepEqual(calls, [{ name: 'delete_repo', arguments: ARGS }], 'the upstream received the arguments the user saw, the real token included');
      await until('the accepted call audited', () => audit().some((l) => l.name === 'fs__delete_repo' && l.outcome === 'ok' && l.confirmation === 'accepted'));
      assert.ok((await confirmations('accepted')) >= 1);
    } finally {
      await c.client.close();
    }
  });

  it("the tool's declared arguments are shown first: keys the call adds do not push them out of the question (found by a review)", async () => {
    const c = await connect(gw);
    try {
      // 25 keys of the caller's own before the destination, each near the 200-character cut: shown in the
      // order sent, the 20-key and 2000-character bounds left the destination out of the question.
      const padding = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [String(i), 'x'.repeat(199)]));
      const args = { ...padding, source: '/tmp/scratch/a', destination: '/etc/passwd' };
      await c.client.callTool({ name: 'fs__move_file', arguments: args });
      assert.equal(c.asked.length, 1);
      assert.match(String(c.asked[0]!.message), /\{\n {2}"source": "\/tmp\/scratch\/a",\n {2}"destination": "\/etc\/passwd",/);
    } finally {
      await c.client.close();
    }
  });

  const refusals: Array<[string, Answer, number, string, string]> = [
    ['decline', async () => ({ action: 'decline' }), -32000, 'SWB_CONFIRMATION_DECLINED', 'declined'],
    ['accept with the box unticked', async () => ({ action: 'accept', content: { confirm: false } }), -32000, 'SWB_CONFIRMATION_DECLINED', 'declined'],
    ['cancel', async () => ({ action: 'cancel' }), -32000, 'SWB_CONFIRMATION_DECLINED', 'cancelled'],
    // Never answers: the gateway gives up after the rule's timeoutMs and tells the client (notifications/cancelled aborts the handler).
    ['timeout', (_req, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted by the gateway')))), -32001, 'SWB_CONFIRMATION_TIMEOUT', 'timeout'],
  ];
  for (const [what, answer, code, gatewayCode, outcome] of refusals) {
    it(`${what}: a clear JSON-RPC error, nothing forwarded, an audit line, counted "${outcome}"`, async () => {
      const c = await connect(gw);
      c.answer = answer;
      try {
        const before = (await upstreamCalls()).length;
        const counted = await confirmations(outcome);
        const denial = (l: Json) => l.rule === 'confirm:fs__delete_*' && l.decision === 'deny' && l.outcome === 'denied' && l.confirmation === outcome;
        const audited = audit().filter(denial).length;
        const err = await refused(c, 'fs__delete_repo');
        assert.equal(err.code, code);
        assert.deepEqual(err.data, { code: gatewayCode, rule: 'fs__delete_*', tool: 'fs__delete_repo', outcome, upstream: 'fs' });
        assert.match(err.message, /confirmation rule "fs__delete_\*".*nothing was sent to the upstream/);
        assert.equal(c.asked.length, 1);
        assert.equal((await upstreamCalls()).length, before, 'the upstream received nothing');
        await until(`an audit line for ${what}`, () => audit().filter(denial).length === audited + 1);
        assert.equal(await confirmations(outcome), counted + 1);
      } finally {
        await c.client.close();
      }
    });
  }

  it("two sessions' questions do not share ids: a session taken over by another replica must not reuse the ids its client saw", async () => {
    const [a, b] = [await connect(gw), await connect(gw)];
    try {
      await a.client.callTool({ name: 'fs__delete_repo', arguments: ARGS });
      await b.client.callTool({ name: 'fs__delete_repo', arguments: ARGS });
      assert.equal(a.ids.length, 1);
      assert.equal(b.ids.length, 1);
      // Each session's peer starts its ids at random (a restored session has a new peer, its ids from 1 before).
      assert.notEqual(a.ids[0], 1);
      assert.notEqual(a.ids[0], b.ids[0]);
    } finally {
      await Promise.all([a.client.close(), b.client.close()]);
    }
  });

  it('a client without the elicitation capability is refused, never silently let through', async () => {
    const c = await connect(gw, { elicits: false });
    try {
      const before = (await upstreamCalls()).length;
      const err = await refused(c, 'fs__delete_repo');
      assert.equal(err.code, -32600);
      assert.equal((err.data as Json).code, 'SWB_CONFIRMATION_UNSUPPORTED');
      assert.match(err.message, /did not declare the elicitation capability/);
      assert.equal((await upstreamCalls()).length, before);
      await until('the unsupported refusal audited', () => audit().some((l) => l.rule === 'confirm:fs__delete_*' && l.confirmation === 'unsupported'));
    } finally {
      await c.client.close();
    }
  });

  it('ifUnsupported: allow lets such a client through; a `when` the arguments do not meet asks nothing', async () => {
    const plain = await connect(gw, { elicits: false });
    const asking = await connect(gw);
    try {
      const before = (await upstreamCalls()).length;
      const outside = { source: '/srv/a', destination: '/home/u/b' };
      assert.equal(textOf(await plain.client.callTool({ name: 'fs__move_file', arguments: outside })), `move_file ${JSON.stringify(outside)}`);
      const inside = { source: '/srv/a', destination: '/tmp/scratch/b' };
      await asking.client.callTool({ name: 'fs__move_file', arguments: inside });
      assert.equal(asking.asked.length, 0, 'a destination under /tmp/scratch asks nothing');
      await asking.client.callTool({ name: 'fs__move_file', arguments: outside });
      assert.equal(asking.asked.length, 1, 'one outside it asks');
      assert.equal((await upstreamCalls()).length, before + 3);
      await until('the unconfirmed call audited as such', () => audit().some((l) => l.name === 'fs__move_file' && l.outcome === 'ok' && l.confirmation === 'unsupported'));
    } finally {
      await plain.client.close();
      await asking.client.close();
    }
  });

  it('an endpoint that shows the upstream unprefixed: the rule for fs__delete_* still asks', async () => {
    const c = await connect(gw, { path: '/solo' });
    c.answer = async () => ({ action: 'decline' });
    try {
      const before = (await upstreamCalls()).length;
      const err = await refused(c, 'delete_repo');
      assert.equal((err.data as Json).tool, 'delete_repo');
      assert.match(String(c.asked[0]?.message), /Tool: "delete_repo"\nUpstream: "fs"/);
      assert.equal((await upstreamCalls()).length, before);
    } finally {
      await c.client.close();
    }
  });

  it('search mode: call_tool asks for the tool it wraps (no bypass through the meta-tool)', async () => {
    const c = await connect(gw, { path: '/search' });
    try {
      const before = (await upstreamCalls()).length;
      c.answer = async () => ({ action: 'decline' });
      const err = await refused(c, 'call_tool', { name: 'fs__delete_repo', arguments: ARGS });
      assert.equal((err.data as Json).code, 'SWB_CONFIRMATION_DECLINED');
      assert.equal((err.data as Json).tool, 'fs__delete_repo');
      assert.match(String(c.asked[0]?.message), /Tool: "fs__delete_repo"/);
      assert.equal((await upstreamCalls()).length, before);
      c.answer = accept;
      const ok = await c.client.callTool({ name: 'call_tool', arguments: { name: 'fs__delete_repo', arguments: ARGS } });
      assert.equal(textOf(ok), `delete_repo ${JSON.stringify(ARGS)}`);
      assert.deepEqual((await upstreamCalls()).slice(before), [{ name: 'delete_repo', arguments: ARGS }]);
    } finally {
      await c.client.close();
    }
  });

  it('legacy HTTP+SSE: the question travels on the event stream; accept forwards, decline does not', async () => {
    const c = await connect(gw, { sse: true });
    try {
      const before = (await upstreamCalls()).length;
      c.answer = async () => ({ action: 'decline' });
      assert.equal((await refused(c, 'fs__delete_repo')).code, -32000);
      c.answer = accept;
      assert.equal(textOf(await c.client.callTool({ name: 'fs__delete_repo', arguments: ARGS })), `delete_repo ${JSON.stringify(ARGS)}`);
      assert.equal(c.asked.length, 2);
      assert.deepEqual((await upstreamCalls()).slice(before), [{ name: 'delete_repo', arguments: ARGS }]);
    } finally {
      await c.client.close();
    }
  });

  it('a 2025-03-26 batch: the question goes out on the batch\'s stream; the answer POSTed back completes it', async () => {
    const init = await post(gw, initializeBody('2025-03-26', 1, { elicitation: {} }));
    const sid = init.headers.get('mcp-session-id')!;
    await init.text();
    assert.equal((await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
    const before = (await upstreamCalls()).length;
    const call = (id: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'fs__delete_repo', arguments: ARGS } });
    const res = await post(gw, [call('b1'), { jsonrpc: '2.0', id: 'b2', method: 'tools/list' }], { sid });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const messages = sseMessages(res.body!);
    const got: Json[] = [];
    for (let m = await messages.next(); !m.done; m = await messages.next()) {
      got.push(m.value);
      if (m.value.method === 'elicitation/create') {
        assert.match(String(m.value.params.message), /Tool: "fs__delete_repo"/);
        assert.equal(m.value.params.mode, undefined, 'no "mode" for a client older than 2025-11-25');
        const answer = await post(gw, { jsonrpc: '2.0', id: m.value.id, result: { action: 'accept', content: { confirm: true } } }, { sid });
        assert.equal(answer.status, 202);
      }
    }
    const byId = new Map(got.filter((m) => !('method' in m)).map((m) => [m.id, m]));
    assert.equal(textOf(byId.get('b1')?.result), `delete_repo ${JSON.stringify(ARGS)}`);
    assert.ok(Array.isArray(byId.get('b2')?.result?.tools));
    assert.deepEqual((await upstreamCalls()).slice(before), [{ name: 'delete_repo', arguments: ARGS }]);
  });
});

/** The JSON-RPC messages of an SSE response body, in order, until it ends. */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<Json> {
  let buf = '';
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
      const data = buf.slice(0, i).split('\n').filter((l) => l.startsWith('data:')).map((l) => l.replace(/^data: ?/, '')).join('\n');
      buf = buf.slice(i + 2);
      if (data) yield JSON.parse(data) as Json;
    }
  }
}
