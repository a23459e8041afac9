// Per-tenant policy through the official SDK client with tokens for different tenants: lists filtered
// by allow/deny globs on exposed (prefixed) names and URIs, denied names answered exactly like unknown
// ones, scoped allow patterns, endpoint grants, request-rate / concurrency / session limits, and the
// audit log (one line per audited call, never the arguments). The gateway fronts server-everything
// and the conformance fixture over stdio on one endpoint, so every name carries its upstream prefix.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { globMatch } from '../../src/policy/glob.js';
import { FIXTURE, everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import {
  ISSUER,
  JwksServer,
  PUBLIC_URL,
  connectWithToken,
  deleteSession,
  initializeBody,
  makeKey,
  mcpRequest,
  openSession,
  signToken,
  type ClientKind,
  type Json,
  type TestKey,
  type TokenClient,
} from '../helpers/tokens.js';
import { moveClockAhead, restoreClock, waitFor } from '../helpers/wait.js';

const fixture = { name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const };

const ALPHA = {
  name: 'alpha',
  endpoints: ['/mcp'],
  tools: { allow: ['everything__echo', 'everything__get-*', 'fixture__test_simple_*'], deny: ['everything__get-env', 'everything__get-tiny-*'] },
  resources: { allow: ['test://*'], deny: ['test://static-binary'] },
  prompts: { allow: ['fixture__*'], deny: ['fixture__test_prompt_with_image', 'fixture__test_prompt_with_arguments'] },
};

const TENANTS = [
  ALPHA,
  // Everything allowed: the reference for unfiltered lists.
  { name: 'open', endpoints: ['*'] },
  {
    name: 'beta',
    endpoints: ['/mcp'],
    tools: { allow: ['fixture__test_simple_text', { match: 'fixture__test_error_handling', scopes: ['tools:errors'] }, { match: 'everything__*', scopes: ['everything', 'read'] }] },
  },
  { name: 'gamma', endpoints: ['/other'] },
  { name: 'rate', endpoints: ['/mcp'], limits: { requestsPerSecond: 1, burst: 4 } },
  { name: 'conc', endpoints: ['/mcp'], limits: { concurrentRequests: 2 } },
  { name: 'sess', endpoints: ['/mcp'], limits: { sessions: 2 } },
  // A deny rule over URIs, and an allow rule an encoded URI must not slip through (issue 13.6).
  { name: 'delta', endpoints: ['/mcp'], resources: { allow: ['test://template/*'], deny: ['*secret*'] } },
];

function config(extra: Record<string, unknown> = {}) {
  return {
    server: { publicUrl: PUBLIC_URL },
    upstreams: [everythingUpstream('everything', 'shared'), fixture],
    endpoints: [
      { path: '/mcp', upstreams: ['everything', 'fixture'] },
      { path: '/other', upstreams: ['fixture'] },
    ],
    tenants: TENANTS,
    ...extra,
  };
}

/** Every page of a list. */
async function listAll(client: Client, kind: 'tools' | 'resources' | 'resourceTemplates' | 'prompts'): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const r: Json =
      kind === 'tools'
        ? await client.listTools(cursor ? { cursor } : undefined)
        : kind === 'resources'
          ? await client.listResources(cursor ? { cursor } : undefined)
          : kind === 'resourceTemplates'
            ? await client.listResourceTemplates(cursor ? { cursor } : undefined)
            : await client.listPrompts(cursor ? { cursor } : undefined);
    out.push(...(r[kind] as Json[]));
    cursor = r.nextCursor;
    if (!cursor) return out;
  }
  throw new Error('more than 50 pages');
}

/** What a tenant's rules let through, computed independently of the gateway (deny wins, then any allow). */
function allowedBy(rules: { allow: string[]; deny: string[] }, name: string): boolean {
  return !rules.deny.some((d) => globMatch(d, name)) && rules.allow.some((a) => globMatch(a, name));
}

/** The wire-level JSON-RPC error a request got (captured before the SDK parses it). */
async function wireError(c: TokenClient, run: () => Promise<unknown>): Promise<Json> {
  const from = c.received.length;
  await assert.rejects(run(), McpError);
  const msg = c.received.slice(from).find((m) => 'error' in m && 'id' in m);
  assert.ok(msg, 'an error response on the wire');
  return msg.error as Json;
}

function auditLines(lines: string[]): Json[] {
  return lines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit');
}

// ---------------------------------------------------------------------------------------------------

describe('policy through the SDK client (everything + fixture on one endpoint)', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let gw: RunningGateway;
  const logLines: string[] = [];
  const clients: TokenClient[] = [];
  const token = (tenant: string, o: { sub?: string; scope?: string } = {}) => signToken(key, { tenant, sub: o.sub ?? `${tenant}-user`, ...(o.scope ? { scope: o.scope } : {}) });
  const connect = async (tenant: string, o: { sub?: string; scope?: string; kind?: ClientKind; path?: string } = {}) => {
    const c = await connectWithToken(gw, o.kind ?? 'streamable-http', await token(tenant, o), o.path ? { path: o.path } : {});
    clients.push(c);
    return c;
  };

  before(async () => {
    key = await makeKey('policy-key', 'ES256');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway(
      config({ auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url, audience: [PUBLIC_URL] } }),
      { logLines },
    );
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await gw?.close();
    await jwks?.close();
  });

  describe('filtering and denial', () => {
    let alpha: TokenClient;
    let open: TokenClient;
    before(async () => {
      alpha = await connect('alpha');
      open = await connect('open');
    });

    it('tools/list shows exactly the allowed, not denied, prefixed names', async () => {
      const all = (await listAll(open.client, 'tools')).map((t) => t.name as string);
      assert.ok(all.includes('everything__get-env') && all.includes('fixture__test_error_handling'), 'the open tenant sees everything');
      const seen = (await listAll(alpha.client, 'tools')).map((t) => t.name as string);
      assert.deepEqual(seen.sort(), all.filter((n) => allowedBy(ALPHA.tools, n)).sort());
      for (const n of ['everything__echo', 'everything__get-sum', 'fixture__test_simple_text']) assert.ok(seen.includes(n), `${n} shown`);
      for (const n of ['everything__get-env', 'everything__get-tiny-image', 'everything__trigger-long-running-operation', 'fixture__test_error_handling']) assert.ok(!seen.includes(n), `${n} hidden`);
    });

    it('a denied tool is answered exactly like an unknown one', async () => {
      // Denied by a deny rule, and by no allow pattern matching.
      const denied = await wireError(alpha, () => alpha.client.callTool({ name: 'everything__get-env', arguments: {} }));
      const notAllowed = await wireError(alpha, () => alpha.client.callTool({ name: 'everything__trigger-long-running-operation', arguments: {} }));
      // Unknown, though the tenant's patterns would allow the names: the gateway looks them up.
      const unknown = await wireError(alpha, () => alpha.client.callTool({ name: 'everything__get-nothing', arguments: {} }));
      const unknown2 = await wireError(alpha, () => alpha.client.callTool({ name: 'fixture__test_simple_nothing', arguments: {} }));
      assert.deepEqual(denied, { code: -32602, message: 'Tool everything__get-env not found' });
      assert.deepEqual(notAllowed, { code: -32602, message: 'Tool everything__trigger-long-running-operation not found' });
      assert.deepEqual(unknown, { code: -32602, message: 'Tool everything__get-nothing not found' });
      assert.deepEqual(unknown2, { code: -32602, message: 'Tool fixture__test_simple_nothing not found' });
      // For a tenant that may call anything, unknown names get the same answer.
      const openUnknown = await wireError(open, () => open.client.callTool({ name: 'nosuch__echo', arguments: {} }));
      const openUnprefixed = await wireError(open, () => open.client.callTool({ name: 'echo', arguments: {} }));
      assert.deepEqual(openUnknown, { code: -32602, message: 'Tool nosuch__echo not found' });
      assert.deepEqual(openUnprefixed, { code: -32602, message: 'Tool echo not found' });
      // The open tenant really can call the denied tool.
      const env = await open.client.callTool({ name: 'everything__get-env', arguments: {} });
      assert.notEqual(env.isError, true);
    });

    it('resources and templates are filtered by URI pattern; a denied URI reads like an unknown one', async () => {
      const all = (await listAll(open.client, 'resources')).map((r) => r.uri as string);
      assert.ok(all.includes('test://static-binary') && all.some((u) => u.startsWith('demo://')), 'the open tenant sees both upstreams');
      const seen = (await listAll(alpha.client, 'resources')).map((r) => r.uri as string);
      assert.deepEqual(seen.sort(), all.filter((u) => allowedBy(ALPHA.resources, u)).sort());
      assert.ok(seen.includes('test://static-text') && !seen.includes('test://static-binary'));
      const templates = (await listAll(alpha.client, 'resourceTemplates')).map((t) => t.uriTemplate as string);
      const allTemplates = (await listAll(open.client, 'resourceTemplates')).map((t) => t.uriTemplate as string);
      assert.deepEqual(templates.sort(), allTemplates.filter((u) => allowedBy(ALPHA.resources, u)).sort());
      assert.ok(templates.includes('test://template/{id}/data') && !templates.some((t) => t.startsWith('demo://')));

      const read = await alpha.client.readResource({ uri: 'test://static-text' });
      assert.equal(read.contents[0]?.uri, 'test://static-text');
      for (const [deniedUri, unknownUri] of [
        ['test://static-binary', 'test://no-such-resource'],
        ['demo://resource/dynamic/text/1', 'test://also-missing/1'],
      ] as const) {
        const denied = await wireError(alpha, () => alpha.client.readResource({ uri: deniedUri }));
        const unknown = await wireError(alpha, () => alpha.client.readResource({ uri: unknownUri }));
        assert.deepEqual(denied, { code: -32002, message: `Resource ${deniedUri} not found`, data: { uri: deniedUri } });
        assert.deepEqual(unknown, { code: -32002, message: `Resource ${unknownUri} not found`, data: { uri: unknownUri } });
      }
      // Subscribing to a denied URI is refused the same way.
      const sub = await wireError(alpha, () => alpha.client.subscribeResource({ uri: 'test://static-binary' }));
      assert.deepEqual(sub, { code: -32002, message: 'Resource test://static-binary not found', data: { uri: 'test://static-binary' } });
    });

    it('a percent-encoded URI cannot slip past a deny rule: it is refused like an unknown resource, never forwarded', async () => {
      const delta = await connect('delta');
      const data = JSON.parse(((await delta.client.readResource({ uri: 'test://template/public/data' })).contents[0] as Json).text);
      assert.equal(data.id, 'public', 'control: the template is readable');
      const unknown = await wireError(delta, () => delta.client.readResource({ uri: 'test://template-nothing/x' }));
      assert.deepEqual(unknown, { code: -32002, message: 'Resource test://template-nothing/x not found', data: { uri: 'test://template-nothing/x' } });
      // "%73ecret" is "secret"; "%2e%2e" is ".."; and scheme case or an encoded slash hiding ".." change nothing.
      for (const uri of ['test://template/secret/data', 'test://template/%73ecret/data', 'test://template/x/%2e%2e/%73ecret/data', 'TEST://template/public/data', 'test://template/..%2F%2e%2e%2Fsecret/data', 'test://template/..%2F..%2Fother/data']) {
        const refused = await wireError(delta, () => delta.client.readResource({ uri }));
        assert.deepEqual(refused, { code: -32002, message: `Resource ${uri} not found`, data: { uri } }, uri);
      }
      const calls = auditLines(logLines).filter((l) => l.tenant === 'delta' && l.method === 'resources/read');
      assert.deepEqual(calls.map((l) => [l.outcome, l.rule]), [
        ['ok', 'resources.allow:test://template/*'],
        ['denied', 'resources: no allow pattern matches'],
        ['denied', 'resources.deny:*secret*'],
        ['denied', 'resources: URI not in normal form'],
        ['denied', 'resources: URI not in normal form'],
        ['denied', 'resources: URI not in normal form'],
        ['denied', 'resources: URI not in normal form'],
        ['denied', 'resources: URI a server may read as another (an escaped separator, a backslash, an empty segment, a NUL, a fragment with a dot-segment)'],
      ]);
    });

    it('prompts are filtered; a denied prompt is answered like an unknown one', async () => {
      const all = (await listAll(open.client, 'prompts')).map((p) => p.name as string);
      const seen = (await listAll(alpha.client, 'prompts')).map((p) => p.name as string);
      assert.deepEqual(seen.sort(), all.filter((n) => allowedBy(ALPHA.prompts, n)).sort());
      assert.ok(seen.includes('fixture__test_simple_prompt') && !seen.includes('fixture__test_prompt_with_image') && !seen.some((n) => n.startsWith('everything__')));
      const ok = await alpha.client.getPrompt({ name: 'fixture__test_simple_prompt' });
      assert.ok(ok.messages.length > 0);
      const denied = await wireError(alpha, () => alpha.client.getPrompt({ name: 'fixture__test_prompt_with_image' }));
      const unknown = await wireError(alpha, () => alpha.client.getPrompt({ name: 'fixture__no-such-prompt' }));
      assert.deepEqual(denied, { code: -32602, message: 'Prompt fixture__test_prompt_with_image not found' });
      assert.deepEqual(unknown, { code: -32602, message: 'Prompt fixture__no-such-prompt not found' });
    });

    it('the legacy SSE client gets the same filtered lists and the same denial', async () => {
      const sse = await connect('alpha', { kind: 'sse', sub: 'alpha-sse' });
      const viaSse = (await listAll(sse.client, 'tools')).map((t) => t.name as string).sort();
      const viaHttp = (await listAll(alpha.client, 'tools')).map((t) => t.name as string).sort();
      assert.deepEqual(viaSse, viaHttp);
      const denied = await wireError(sse, () => sse.client.callTool({ name: 'everything__get-env', arguments: {} }));
      assert.deepEqual(denied, { code: -32602, message: 'Tool everything__get-env not found' });
      const echo = await sse.client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } });
      assert.equal((echo.content as Json[])[0]?.text, 'Echo: hi');
    });

    it('completion/complete for a denied prompt is answered like one for an unknown prompt', async () => {
      const complete = (name: string) => alpha.client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'arg1', value: 'pa' } });
      const denied = await wireError(alpha, () => complete('fixture__test_prompt_with_arguments'));
      // Allowed by "fixture__*" but absent: the gateway, not the upstream, answers.
      const unknown = await wireError(alpha, () => complete('fixture__no-such-prompt'));
      assert.deepEqual(denied, { code: -32602, message: 'Prompt fixture__test_prompt_with_arguments not found' });
      assert.deepEqual(unknown, { code: -32602, message: 'Prompt fixture__no-such-prompt not found' });
      // The open tenant completes the prompt alpha may not see.
      const r = await open.client.complete({ ref: { type: 'ref/prompt', name: 'fixture__test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'pa' } });
      assert.deepEqual(r.completion.values, ['paris', 'park', 'party']);
    });

    it('completion/complete for a denied resource template is answered like one for an unknown template', async () => {
      const complete = (uri: string) => alpha.client.complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'index', value: '1' } });
      const denied = await wireError(alpha, () => complete('demo://resource/dynamic/text/{index}'));
      // Allowed by "test://*" but absent.
      const unknown = await wireError(alpha, () => complete('test://no-such/{index}'));
      assert.deepEqual(denied, { code: -32602, message: 'Resource template demo://resource/dynamic/text/{index} not found' });
      assert.deepEqual(unknown, { code: -32602, message: 'Resource template test://no-such/{index} not found' });
    });
  });

  describe('scoped allow patterns', () => {
    it('hide a tool from a token without the scope and show it to one with the scope', async () => {
      const plain = await connect('beta', { sub: 'beta-plain' });
      assert.deepEqual((await listAll(plain.client, 'tools')).map((t) => t.name), ['fixture__test_simple_text']);
      await assert.rejects(
        plain.client.callTool({ name: 'fixture__test_error_handling', arguments: {} }),
        (err: unknown) => err instanceof StreamableHTTPError && err.code === 403,
      );

      const scoped = await connect('beta', { sub: 'beta-scoped', scope: 'tools:errors' });
      const names = (await listAll(scoped.client, 'tools')).map((t) => t.name as string).sort();
      assert.deepEqual(names, ['fixture__test_error_handling', 'fixture__test_simple_text']);
      const r = await scoped.client.callTool({ name: 'fixture__test_error_handling', arguments: {} });
      assert.equal(r.isError, true);

      // Every scope a pattern names is needed: "everything" alone is not enough for everything__*.
      const half = await connect('beta', { sub: 'beta-half', scope: 'everything' });
      assert.ok(!(await listAll(half.client, 'tools')).some((t) => String(t.name).startsWith('everything__')));
      const full = await connect('beta', { sub: 'beta-full', scope: 'everything read' });
      const fullNames = (await listAll(full.client, 'tools')).map((t) => t.name as string);
      assert.ok(fullNames.includes('everything__echo') && fullNames.includes('fixture__test_simple_text'));
    });
  });

  describe('endpoint grants', () => {
    it('a tenant not granted the endpoint gets 403 (and is served where it is granted)', async () => {
      const t = await token('gamma');
      const r = await mcpRequest(gw, initializeBody(), { token: t });
      assert.equal(r.status, 403, r.text);
      for (const kind of ['streamable-http', 'sse'] as const) await assert.rejects(connectWithToken(gw, kind, t));
      const c = await connect('gamma', { path: '/other' });
      assert.ok((await listAll(c.client, 'tools')).some((x) => x.name === 'test_simple_text'));
    });
  });

  describe('limits', () => {
    it('requestsPerSecond + burst: HTTP 429 with Retry-After, then recovers after waiting', async () => {
      const t = await token('rate');
      const sid = await openSession(gw, t); // one request of the burst of 4 (initialize; a notification takes none)
      let refused: Awaited<ReturnType<typeof mcpRequest>> | undefined;
      let accepted = 0;
      for (let i = 0; i < 8 && !refused; i++) {
        const r = await mcpRequest(gw, { jsonrpc: '2.0', id: 10 + i, method: 'tools/list' }, { token: t, sid });
        if (r.status === 429) refused = r;
        else {
          assert.equal(r.status, 200, r.text);
          accepted++;
        }
      }
      assert.ok(refused, 'a 429 within the burst');
      assert.ok(accepted >= 2 && accepted <= 4, `${accepted} requests went through before the 429`);
      const retryAfter = refused.headers.get('retry-after');
      assert.match(retryAfter ?? '', /^[1-9]\d*$/, 'Retry-After in whole seconds');
      assert.equal(Number(retryAfter), 1);
      assert.equal(refused.json?.jsonrpc, '2.0');
      assert.equal(typeof refused.json?.error?.message, 'string');
      // Other tenants are not affected.
      const other = await connect('open', { sub: 'bystander' });
      await other.client.listTools();
      // The bucket refills with wall time: the clock moves past Retry-After instead of the test sleeping
      // through it (and a second more for the DELETE, which takes a token too).
      moveClockAhead(Number(retryAfter) * 1000 + 50);
      try {
        const again = await mcpRequest(gw, { jsonrpc: '2.0', id: 99, method: 'tools/list' }, { token: t, sid });
        assert.equal(again.status, 200, again.text);
        moveClockAhead(1050);
        assert.equal(await deleteSession(gw, t, sid), 200);
      } finally {
        restoreClock();
      }
    });

    it('concurrentRequests: the extra call gets SWB_RATE_LIMITED while others are in flight, then recovers', async () => {
      const c = await connect('conc', { sub: 'conc-1' });
      const c2 = await connect('conc', { sub: 'conc-2' });
      const sid = c.transport.sessionId!;
      // Long enough that the extra call lands while both still run on a loaded machine.
      const slow = () => c.client.callTool({ name: 'everything__trigger-long-running-operation', arguments: { duration: 3, steps: 3 } });
      const inflight = [slow(), slow()];
      const session = gw.app.gateway.registry.get(sid);
      assert.ok(session);
      assert.ok(await waitFor(() => session.inflight >= 2, { timeoutMs: 10_000 }), 'the two calls never were in flight together');
      assert.equal(session.inflight, 2, 'two calls in flight');

      const err = await wireError(c, () => c.client.callTool({ name: 'fixture__test_simple_text', arguments: {} }));
      assert.equal(err.data?.code, 'SWB_RATE_LIMITED');
      assert.equal(err.code, -32000);
      // The limit is the tenant's, across its sessions.
      const err2 = await wireError(c2, () => c2.client.callTool({ name: 'fixture__test_simple_text', arguments: {} }));
      assert.equal(err2.data?.code, 'SWB_RATE_LIMITED');
      // Not counted against another tenant.
      const other = await connect('open', { sub: 'conc-bystander' });
      await other.client.callTool({ name: 'fixture__test_simple_text', arguments: {} });

      for (const r of await Promise.all(inflight)) assert.match(JSON.stringify(r.content), /Long running operation completed/);
      const after = await c.client.callTool({ name: 'fixture__test_simple_text', arguments: {} });
      assert.notEqual(after.isError, true);
      await c2.client.callTool({ name: 'fixture__test_simple_text', arguments: {} });
    });

    it('sessions: initialize refused with 429 at the limit; allowed again after a DELETE', async () => {
      const t = await token('sess');
      const s1 = await openSession(gw, t);
      const s2 = await openSession(gw, t);
      const third = await mcpRequest(gw, initializeBody(), { token: t });
      assert.equal(third.status, 429, third.text);
      assert.ok(third.headers.get('retry-after'), 'a Retry-After');
      assert.equal(third.headers.get('mcp-session-id'), null);
      // The legacy transport counts against the same limit, and so does the SDK client.
      const sse = await fetch(`${gw.base}/sse`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${t}` }, signal: AbortSignal.timeout(5000) });
      assert.equal(sse.status, 429);
      await sse.body?.cancel();
      await assert.rejects(connectWithToken(gw, 'streamable-http', t));

      assert.equal(await deleteSession(gw, t, s1), 200);
      const s3 = await openSession(gw, t);
      assert.notEqual(s3, s1);
      assert.equal((await mcpRequest(gw, initializeBody(), { token: t })).status, 429);
      assert.equal(await deleteSession(gw, t, s2), 200);
      assert.equal(await deleteSession(gw, t, s3), 200);
      // An SDK client that ends its session (DELETE), or closes its legacy stream, frees its slot too.
      const c = await connectWithToken(gw, 'streamable-http', t);
      const c2 = await connectWithToken(gw, 'sse', t);
      await (c.transport as StreamableHTTPClientTransport).terminateSession();
      await c.close();
      await c2.close();
      // The legacy session ends with its stream, a moment after the client closes it: poll, bounded.
      const ids: string[] = [];
      for (let i = 0; i < 100 && ids.length < 2; i++) {
        const r = await mcpRequest(gw, initializeBody(), { token: t });
        if (r.status === 200) ids.push(r.headers.get('mcp-session-id')!);
        else {
          assert.equal(r.status, 429, r.text);
          await sleep(20);
        }
      }
      assert.equal(ids.length, 2, 'both slots freed');
      assert.equal((await mcpRequest(gw, initializeBody(), { token: t })).status, 429);
      for (const id of ids) assert.equal(await deleteSession(gw, t, id), 200);
    });
  });

  describe('audit log', () => {
    const SECRET = 'tr0ub4dor-SECRET-ARG-7d1f';
    const SECRET2 = 'correct-horse-SECRET-ARG-93ab';

    it('one line per tools/call, resources/read and prompts/get, with the decision, and never the arguments', async () => {
      const c = await connect('alpha', { sub: 'auditor' });
      const sid = c.transport.sessionId!;
      const from = logLines.length;
      await c.client.callTool({ name: 'everything__echo', arguments: { message: SECRET } });
      await c.client.readResource({ uri: 'test://static-text' });
      await c.client.getPrompt({ name: 'fixture__test_prompt_with_embedded_resource', arguments: { resourceUri: `test://${SECRET2}` } });
      await assert.rejects(c.client.callTool({ name: 'everything__get-env', arguments: { token: SECRET } }));
      await assert.rejects(c.client.callTool({ name: 'everything__trigger-long-running-operation', arguments: { note: SECRET } }));
      await c.client.listTools(); // not audited
      const lines = auditLines(logLines.slice(from)).filter((l) => l.session === sid);
      assert.equal(lines.length, 5, JSON.stringify(lines, null, 1));
      const [echo, read, prompt, denied, notAllowed] = lines as [Json, Json, Json, Json, Json];
      const common = { tenant: 'alpha', subject: 'auditor', session: sid, endpoint: '/mcp' };
      assert.deepEqual(pick(echo, ['tenant', 'subject', 'session', 'endpoint', 'method', 'upstream', 'name', 'decision', 'rule', 'outcome']), {
        ...common,
        method: 'tools/call',
        upstream: 'everything',
        name: 'everything__echo',
        decision: 'allow',
        rule: 'tools.allow:everything__echo',
        outcome: 'ok',
      });
      assert.deepEqual(pick(read, ['tenant', 'subject', 'session', 'endpoint', 'method', 'upstream', 'name', 'decision', 'rule', 'outcome']), {
        ...common,
        method: 'resources/read',
        upstream: 'fixture',
        name: 'test://static-text',
        decision: 'allow',
        rule: 'resources.allow:test://*',
        outcome: 'ok',
      });
      assert.deepEqual(pick(prompt, ['tenant', 'subject', 'session', 'endpoint', 'method', 'upstream', 'name', 'decision', 'rule', 'outcome']), {
        ...common,
        method: 'prompts/get',
        upstream: 'fixture',
        name: 'fixture__test_prompt_with_embedded_resource',
        decision: 'allow',
        rule: 'prompts.allow:fixture__*',
        outcome: 'ok',
      });
      assert.deepEqual(pick(denied, ['tenant', 'subject', 'session', 'endpoint', 'method', 'name', 'decision', 'rule', 'outcome']), {
        ...common,
        method: 'tools/call',
        name: 'everything__get-env',
        decision: 'deny',
        rule: 'tools.deny:everything__get-env',
        outcome: 'denied',
      });
      assert.equal(notAllowed.decision, 'deny');
      assert.equal(notAllowed.rule, 'tools: no allow pattern matches');
      for (const l of [echo, read, prompt]) {
        assert.ok(Number.isFinite(l.latencyMs) && l.latencyMs >= 0, 'latencyMs');
        assert.ok(Number.isInteger(l.responseBytes) && l.responseBytes > 0, 'responseBytes');
      }
      assert.equal(denied.responseBytes, 0);
      for (const l of lines) {
        assert.equal('arguments' in l, false);
        assert.equal('argumentsSha256' in l, false, 'no hash unless configured');
      }
      for (const line of logLines) {
        assert.ok(!line.includes(SECRET), `a secret argument in the log: ${line}`);
        assert.ok(!line.includes(SECRET2), `a secret argument in the log: ${line}`);
      }
    });

    it('a tool error is audited with outcome tool_error', async () => {
      const c = await connect('beta', { sub: 'beta-audit', scope: 'tools:errors' });
      const from = logLines.length;
      await c.client.callTool({ name: 'fixture__test_error_handling', arguments: {} });
      const [line] = auditLines(logLines.slice(from)).filter((l) => l.session === c.transport.sessionId);
      assert.equal(line?.outcome, 'tool_error');
      assert.equal(line?.decision, 'allow');
      assert.equal(line?.rule, 'tools.allow:fixture__test_error_handling');
    });

    it(
      'a call refused with 403 insufficient_scope is audited as a denial with its rule',
      async () => {
        const c = await connect('beta', { sub: 'beta-noscope' });
        const from = logLines.length;
        await assert.rejects(c.client.callTool({ name: 'fixture__test_error_handling', arguments: {} }));
        const lines = auditLines(logLines.slice(from)).filter((l) => l.session === c.transport.sessionId);
        assert.equal(lines.length, 1, 'one audit line');
        assert.deepEqual(pick(lines[0]!, ['tenant', 'subject', 'method', 'name', 'decision', 'outcome']), {
          tenant: 'beta',
          subject: 'beta-noscope',
          method: 'tools/call',
          name: 'fixture__test_error_handling',
          decision: 'deny',
          outcome: 'denied',
        });
        assert.match(String(lines[0]!.rule), /missing scope tools:errors/);
      },
    );

    it(
      'a call refused by the concurrency limit is audited too (one line per tools/call)',
      async () => {
        const c = await connect('conc', { sub: 'conc-audit' });
        const sid = c.transport.sessionId!;
        const slow = () => c.client.callTool({ name: 'everything__trigger-long-running-operation', arguments: { duration: 3, steps: 3 } });
        const inflight = [slow(), slow()];
        const session = gw.app.gateway.registry.get(sid)!;
        assert.ok(await waitFor(() => session.inflight >= 2, { timeoutMs: 10_000 }), 'the two calls never were in flight together');
        const from = logLines.length;
        const err = await wireError(c, () => c.client.callTool({ name: 'fixture__test_simple_text', arguments: {} }));
        assert.equal(err.data?.code, 'SWB_RATE_LIMITED');
        await Promise.all(inflight);
        const lines = auditLines(logLines.slice(from)).filter((l) => l.session === sid && l.name === 'fixture__test_simple_text');
        assert.equal(lines.length, 1, 'the refused call has an audit line');
        assert.equal(lines[0]!.decision, 'deny');
        assert.equal(lines[0]!.outcome, 'denied');
        assert.equal(lines[0]!.rule, 'limits.concurrentRequests');
      },
    );
  });
});

function pick(o: Json, keys: string[]): Json {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}

// ---------------------------------------------------------------------------------------------------

describe('audit log with hashArguments', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let gw: RunningGateway;
  let c: TokenClient | undefined;
  const logLines: string[] = [];

  before(async () => {
    key = await makeKey('hash-key');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway(
      {
        server: { publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url, audience: [PUBLIC_URL] },
        tenants: [{ name: 'open', endpoints: ['*'] }],
        audit: { hashArguments: true },
        upstreams: [fixture],
        endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
      },
      { logLines },
    );
  });
  after(async () => {
    await c?.close();
    await gw?.close();
    await jwks?.close();
  });

  it('logs argumentsSha256 = sha256(JSON.stringify(arguments)), never the arguments', async () => {
    c = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'open', sub: 'hasher' }));
    const sid = c.transport.sessionId!;
    const toolArgs = { name: 'hash-SECRET-5a1e', address: { city: 'Zürich', street: 'Bahnhofstrasse 1' } };
    const promptArgs = { arg1: 'paris-SECRET-77c2', arg2: 'second' };
    const from = logLines.length;
    await c.client.callTool({ name: 'json_schema_2020_12_tool', arguments: toolArgs });
    await c.client.getPrompt({ name: 'test_prompt_with_arguments', arguments: promptArgs });
    await c.client.readResource({ uri: 'test://static-text' });
    const lines = auditLines(logLines.slice(from)).filter((l) => l.session === sid);
    assert.equal(lines.length, 3);
    const sha = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex');
    assert.equal(lines[0]!.argumentsSha256, sha(toolArgs));
    assert.equal(lines[0]!.upstream, 'fixture');
    assert.equal(lines[0]!.name, 'json_schema_2020_12_tool');
    assert.equal(lines[1]!.argumentsSha256, sha(promptArgs));
    assert.equal('argumentsSha256' in lines[2]!, false, 'resources/read has no arguments');
    for (const line of logLines) {
      assert.ok(!line.includes('hash-SECRET-5a1e') && !line.includes('paris-SECRET-77c2') && !line.includes('Bahnhofstrasse'), `an argument in the log: ${line}`);
    }
  });
});
