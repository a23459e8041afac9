import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openListen } from '../helpers/modern-http.js';

const V = '2026-07-28';
const META = (caps: Record<string, unknown> = {}) => ({ 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': caps, 'io.modelcontextprotocol/clientInfo': { name: 'modern-test', version: '1' } });

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

let nextId = 1;

/** One modern POST with the headers a conforming client sends (overridable). */
async function modern(gw: RunningGateway, method: string, params: Record<string, unknown> = {}, o: { caps?: Record<string, unknown>; headers?: Record<string, string | undefined>; path?: string; meta?: Record<string, unknown> | null } = {}): Promise<Answer> {
  const id = nextId++;
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': method };
  if (name !== undefined) headers['mcp-name'] = name;
  for (const [k, v] of Object.entries(o.headers ?? {})) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  const meta = o.meta === null ? undefined : (o.meta ?? META(o.caps));
  const body = { jsonrpc: '2.0', id, method, params: meta ? { ...params, _meta: meta } : params };
  const res = await fetch(gw.url(o.path), { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  const ct = res.headers.get('content-type') ?? '';
  // An SSE answer: the last data line is the response.
  const json = ct.includes('text/event-stream') ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data: ')).pop()!.slice(6)) : text ? JSON.parse(text) : undefined;
  if (json && 'id' in json && json.id !== null) assert.equal(json.id, id, 'the answer carries the request id');
  return { status: res.status, body: json, headers: res.headers };
}

describe('2026-07-28 clients in front of a 2025 stdio upstream', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [
        { path: '/mcp', upstreams: ['fx'] },
        { path: '/legacy', upstreams: ['fx'], eras: ['legacy'] },
        { path: '/other', upstreams: ['fx'] },
      ],
    });
  });
  after(() => gw.close());

  it('server/discover: versions, capabilities, serverInfo, resultType and caching fields', async () => {
    const r = await modern(gw, 'server/discover');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.result.supportedVersions, [V]);
    assert.ok(r.body.result.capabilities.tools);
    assert.equal(r.body.result.resultType, 'complete');
    assert.equal(r.body.result.ttlMs, 0);
    assert.equal(r.body.result.cacheScope, 'private', 'tool pinning is on by default: what a caller sees may be withheld');
    assert.equal(r.body.result._meta['io.modelcontextprotocol/serverInfo'].name, 'switchboard');
    assert.equal(r.headers.get('mcp-session-id'), null, 'no session is minted');
  });

  it('lists and calls tools statelessly, results shaped for the era', async () => {
    const list = await modern(gw, 'tools/list');
    assert.equal(list.status, 200);
    assert.ok(list.body.result.tools.some((t: { name: string }) => t.name === 'test_simple_text'));
    assert.equal(list.body.result.resultType, 'complete');
    assert.equal(list.body.result.cacheScope, 'private');
    const call = await modern(gw, 'tools/call', { name: 'test_simple_text', arguments: {} });
    assert.equal(call.body.result.resultType, 'complete');
    assert.equal(call.body.result.content[0].text, 'This is a simple text response for testing.');
    assert.equal(call.body.result.ttlMs, undefined, 'tools/call results are not cacheable');
  });

  it('an upstream elicitation mid-call becomes an input_required round, and the retry completes the call', async () => {
    const caps = { elicitation: { form: {} } };
    const params = { name: 'test_elicitation', arguments: { message: 'Who are you?' } };
    const first = await modern(gw, 'tools/call', params, { caps });
    assert.equal(first.status, 200);
    const r = first.body.result;
    assert.equal(r.resultType, 'input_required');
    const [key, ask] = Object.entries(r.inputRequests as Record<string, { method: string; params: any }>)[0]!;
    assert.equal(ask.method, 'elicitation/create');
    assert.equal(ask.params.message, 'Upstream "fx" asks: Who are you?'); // shown as the upstream's, not the gateway's
    assert.equal(typeof r.requestState, 'string');
    assert.equal(r.ttlMs, undefined, 'input_required results carry no caching fields');
    const answer = { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    const retry = await modern(gw, 'tools/call', { ...params, inputResponses: { [key]: answer }, requestState: r.requestState }, { caps });
    assert.equal(retry.status, 200);
    assert.equal(retry.body.result.resultType, 'complete');
    assert.match(retry.body.result.content[0].text, /action=accept.*ada@example\.com/);
    assert.equal(gw.app.gateway.modern.held, 0, 'an answered exchange is not kept');
    // Single use: the same state again is refused, and nothing reaches the upstream.
    const replay = await modern(gw, 'tools/call', { ...params, inputResponses: { [key]: answer }, requestState: r.requestState }, { caps });
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error.code, -32602);
  });

  it('a tampered requestState or one presented on another request is refused', async () => {
    const caps = { elicitation: { form: {} } };
    const params = { name: 'test_elicitation', arguments: { message: 'again' } };
    const first = await modern(gw, 'tools/call', params, { caps });
    const state: string = first.body.result.requestState;
    const tampered = state.slice(0, -2) + (state.endsWith('A') ? 'BB' : 'AA');
    const bad = await modern(gw, 'tools/call', { ...params, inputResponses: {}, requestState: tampered }, { caps });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, -32602);
    const other = await modern(gw, 'tools/call', { ...params, arguments: { message: 'something else' }, inputResponses: {}, requestState: state }, { caps });
    assert.equal(other.status, 400);
    assert.equal(other.body.error.code, -32602);
    // The same request on another endpoint of the gateway: refused, and the state is not used up.
    const elsewhere = await modern(gw, 'tools/call', { ...params, inputResponses: {}, requestState: state }, { caps, path: '/other' });
    assert.equal(elsewhere.status, 400, JSON.stringify(elsewhere.body));
    assert.equal(elsewhere.body.error.data?.reason, 'wrong-request');
    const here = await modern(gw, 'tools/call', { ...params, inputResponses: {}, requestState: state }, { caps });
    assert.equal(here.status, 200, JSON.stringify(here.body));
  });

  it('a retry without the answers asks again for what is missing', async () => {
    const caps = { elicitation: { form: {} } };
    const params = { name: 'test_elicitation', arguments: { message: 'twice' } };
    const first = await modern(gw, 'tools/call', params, { caps });
    const again = await modern(gw, 'tools/call', { ...params, inputResponses: {}, requestState: first.body.result.requestState }, { caps });
    assert.equal(again.body.result.resultType, 'input_required');
    const key = Object.keys(again.body.result.inputRequests)[0]!;
    const done = await modern(gw, 'tools/call', { ...params, inputResponses: { [key]: { action: 'decline' } }, requestState: again.body.result.requestState }, { caps });
    assert.match(done.body.result.content[0].text, /action=decline/);
  });

  it('an upstream request the client did not declare the capability for is -32021 (HTTP 400)', async () => {
    const r = await modern(gw, 'tools/call', { name: 'test_elicitation', arguments: { message: 'no caps' } });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, -32021);
    assert.ok(r.body.error.data.requiredCapabilities.elicitation);
  });

  it('validates headers and _meta in the spec order and codes, always with the request id', async () => {
    const noMethod = await modern(gw, 'tools/list', {}, { headers: { 'mcp-method': undefined } });
    assert.deepEqual([noMethod.status, noMethod.body.error.code], [400, -32020]);
    const wrongName = await modern(gw, 'tools/call', { name: 'test_simple_text', arguments: {} }, { headers: { 'mcp-name': 'other' } });
    assert.deepEqual([wrongName.status, wrongName.body.error.code], [400, -32020]);
    const b64 = await modern(gw, 'tools/call', { name: 'test_simple_text', arguments: {} }, { headers: { 'mcp-name': `=?base64?${Buffer.from('test_simple_text').toString('base64')}?=` } });
    assert.equal(b64.status, 200, 'a base64-sentinel Mcp-Name is decoded before comparison');
    // Mcp-Method has no sentinel form: an intermediary that routes or filters on it reads it as sent, so a
    // sentinel there is a value that does not match the body (else "=?base64?…?=" passes a rule on tools/call).
    const b64Method = await modern(gw, 'tools/call', { name: 'test_simple_text', arguments: {} }, { headers: { 'mcp-method': `=?base64?${Buffer.from('tools/call').toString('base64')}?=` } });
    assert.deepEqual([b64Method.status, b64Method.body.error?.code], [400, -32020], JSON.stringify(b64Method.body));
    const versionMismatch = await modern(gw, 'tools/list', {}, { headers: { 'mcp-protocol-version': '2027-01-01' } });
    assert.deepEqual([versionMismatch.status, versionMismatch.body.error.code], [400, -32020]);
    const noCaps = await modern(gw, 'tools/list', {}, { meta: { 'io.modelcontextprotocol/protocolVersion': V } });
    assert.deepEqual([noCaps.status, noCaps.body.error.code], [400, -32602]);
    const future = await modern(gw, 'tools/list', {}, { headers: { 'mcp-protocol-version': '2027-01-01' }, meta: { ...META(), 'io.modelcontextprotocol/protocolVersion': '2027-01-01' } });
    assert.deepEqual([future.status, future.body.error.code], [400, -32022]);
    assert.deepEqual(future.body.error.data, { supported: [V], requested: '2027-01-01' });
    const removed = await modern(gw, 'resources/subscribe', { uri: 'test://static-text' });
    assert.deepEqual([removed.status, removed.body.error.code], [404, -32601]);
    const get = await fetch(gw.url(), { headers: { accept: 'text/event-stream', 'mcp-protocol-version': V } });
    assert.equal(get.status, 405);
  });

  it('a logLevel that is not a log level is -32602 (HTTP 400), not every message of the call', async () => {
    const call = { name: 'test_tool_with_logging', arguments: {} };
    for (const level of ['warn', 'verbose', 5]) {
      const r = await modern(gw, 'tools/call', call, { meta: { ...META(), 'io.modelcontextprotocol/logLevel': level } });
      assert.equal(r.status, 400, `logLevel ${JSON.stringify(level)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error?.code, -32602);
      assert.match(r.body.error.message, /logLevel/);
      assert.equal(r.headers.get('content-type')?.includes('text/event-stream'), false, 'no log message went out before the refusal');
    }
    // A real level still filters: the fixture logs at info, so "error" asks for none of them.
    const quiet = await modern(gw, 'tools/call', call, { meta: { ...META(), 'io.modelcontextprotocol/logLevel': 'error' } });
    assert.equal(quiet.status, 200);
    assert.equal(quiet.headers.get('content-type')?.includes('application/json'), true, 'no notifications/message below the level asked for');
  });

  it('two listen streams asking for one resource at once: closing one leaves the other subscribed', async () => {
    const watched = { resourceSubscriptions: ['test://watched-resource'] };
    const [first, second] = await Promise.all([openListen(gw.url('/mcp'), 'one', watched), openListen(gw.url('/mcp'), 'two', watched)]);
    try {
      assert.equal((await first.next()).method, 'notifications/subscriptions/acknowledged');
      assert.equal((await second.next()).method, 'notifications/subscriptions/acknowledged');
      first.close();
      // The first stream's end is seen by the gateway (its unsubscribe, if any, is sent) before the change.
      await new Promise((r) => setTimeout(r, 300));
      const trigger = await modern(gw, 'tools/call', { name: 'test_trigger_resource_change', arguments: {} });
      assert.match(String(trigger.body.result?.content?.[0]?.text), /resources\/updated sent/, 'the upstream still counts the URI as subscribed');
      let note = await second.next();
      while (note.method !== 'notifications/resources/updated') note = await second.next();
      assert.equal(note.params.uri, 'test://watched-resource');
    } finally {
      first.close();
      second.close();
    }
  });

  it('counts modern requests under protocol_era="modern"', async () => {
    await modern(gw, 'tools/call', { name: 'test_simple_text', arguments: {} });
    const text = await (await fetch(gw.app.metricsUrl!)).text();
    const line = text.split('\n').find((l) => l.startsWith('switchboard_requests_total{') && l.includes('method="tools/call"') && l.includes('protocol_era="modern"') && l.includes('outcome="ok"'));
    assert.ok(line && Number(line.split(' ').pop()) >= 1, 'a modern tools/call is counted with its era');
  });

  it('an endpoint that serves only the legacy era answers modern requests as a legacy server would', async () => {
    const r = await modern(gw, 'tools/list', {}, { path: '/legacy' });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, -32600, 'never a modern error code from a legacy-only endpoint');
  });
});

describe('URL-mode elicitation and tenant-scoped discovery for modern clients', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      tenants: [{ name: 'anonymous', endpoints: ['*'], prompts: { allow: [] } }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw.close());

  it('server/discover offers only the kinds the tenant may see', async () => {
    const r = await modern(gw, 'server/discover');
    assert.ok(r.body.result.capabilities.tools);
    assert.equal(r.body.result.capabilities.prompts, undefined, 'the tenant allows no prompt');
    assert.equal(r.body.result.cacheScope, 'private', 'a tenant with rules: what it sees is its own');
  });

  it('a URL-mode elicitation request reaches the client as a URL input request, without the 2025 elicitationId', async () => {
    const caps = { elicitation: { form: {}, url: {} } };
    const first = await modern(gw, 'tools/call', { name: 'test_elicitation_url', arguments: {} }, { caps });
    const [key, ask] = Object.entries(first.body.result.inputRequests as Record<string, { method: string; params: any }>)[0]!;
    assert.equal(ask.params.mode, 'url');
    assert.equal(ask.params.url, 'https://example.com/consent');
    assert.equal('elicitationId' in ask.params, false);
    assert.equal('_meta' in ask.params, false, 'the key hint is not shown to the client');
    const done = await modern(gw, 'tools/call', { name: 'test_elicitation_url', arguments: {}, inputResponses: { [key]: { action: 'accept' } }, requestState: first.body.result.requestState }, { caps });
    assert.match(done.body.result.content[0].text, /URL elicitation finished: accept/);
  });

  it('a 2025 upstream\'s -32042 becomes a URL round; once accepted, the call is made again and completes; declined, it is not', async () => {
    const caps = { elicitation: { url: {} } };
    const params = { name: 'test_url_elicitation_required', arguments: { token: 't1' } };
    const first = await modern(gw, 'tools/call', params, { caps });
    assert.equal(first.body.result.resultType, 'input_required');
    const [key, ask] = Object.entries(first.body.result.inputRequests as Record<string, { method: string; params: any }>)[0]!;
    assert.deepEqual([ask.method, ask.params.mode, ask.params.url], ['elicitation/create', 'url', 'https://example.com/consent/t1']);
    const done = await modern(gw, 'tools/call', { ...params, inputResponses: { [key]: { action: 'accept' } }, requestState: first.body.result.requestState }, { caps });
    assert.equal(done.body.result.resultType, 'complete');
    assert.match(done.body.result.content[0].text, /consent given for t1/);
    const declinedParams = { name: 'test_url_elicitation_required', arguments: { token: 't3' } };
    const asked = await modern(gw, 'tools/call', declinedParams, { caps });
    const [declinedKey] = Object.keys(asked.body.result.inputRequests);
    const declined = await modern(gw, 'tools/call', { ...declinedParams, inputResponses: { [declinedKey!]: { action: 'decline' } }, requestState: asked.body.result.requestState }, { caps });
    assert.equal(declined.body.error?.data?.code, 'SWB_URL_ELICITATION_DECLINED', `a declined URL is not taken for a visited one: ${JSON.stringify(declined.body)}`);
    assert.equal(declined.body.error.data.outcome, 'declined');
    const noUrl = await modern(gw, 'tools/call', { name: 'test_url_elicitation_required', arguments: { token: 't2' } }, { caps: { elicitation: { form: {} } } });
    assert.deepEqual([noUrl.status, noUrl.body.error.code], [400, -32021]);
    assert.deepEqual(noUrl.body.error.data.requiredCapabilities, { elicitation: { url: {} } });
  });
});

describe('a subscriptions/listen whose client leaves while its standing opens', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      session: { idleTimeoutMs: 1000 },
      // Per-session: the standing's first request starts the upstream, which takes a while.
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'per-session' }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw.close());

  it('leaves no listener behind: the standing goes idle and is swept', async () => {
    const ac = new AbortController();
    const res = fetch(gw.url('/mcp'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'gone', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true, resourceSubscriptions: ['test://watched-resource'] }, _meta: META() } }),
      signal: ac.signal,
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    await res;
    const sessions = gw.app.gateway.modern.sessions;
    // Opened (the upstream started), then idle: swept within a few idle periods.
    const deadline = Date.now() + 10_000;
    while (sessions.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(sessions.size, 0, 'the standing is still held: a listener was left behind');
  });
});

