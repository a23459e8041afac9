import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { methodSpec } from '../../../src/jsonrpc/methods.js';
import type { ModernCall } from '../../../src/modern/modern-request.js';
import { CacheLimit, modernResponseBody, shapeModernResponse } from '../../../src/modern/result-shape.js';
import { upstreamParams } from '../../../src/modern/upstream-params.js';

const call = (method: string, params: Record<string, unknown> = {}): ModernCall => ({
  id: 1,
  method,
  params,
  spec: methodSpec(method)!,
  version: '2026-07-28',
  capabilities: {},
  clientInfo: undefined,
  logLevel: undefined,
  paramHeaders: {},
});
const O = { serverInfo: { name: 'switchboard', version: '0' }, ttlMs: 5000, cacheScope: 'private' as const };

/** What an upstream receives of the params: their JSON (a key left undefined is not sent). */
const sent = (p: Record<string, unknown> | undefined): unknown => (p === undefined ? undefined : JSON.parse(JSON.stringify(p)));

describe('upstreamParams: what a 2025 upstream is sent of a modern request', () => {
  it('strips the era\'s own keys and keeps progress, trace context and the client\'s capabilities', () => {
    const caps = { elicitation: {} };
    const params = {
      name: 't',
      arguments: { a: 1 },
      inputResponses: { k: {} },
      requestState: 'x',
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': {}, 'io.modelcontextprotocol/clientCapabilities': caps, 'io.modelcontextprotocol/logLevel': 'info', progressToken: 7, traceparent: '00-x' },
    };
    const before = structuredClone(params);
    const p = upstreamParams(params);
    assert.deepEqual(params, before, 'the client\'s params are not changed');
    assert.deepEqual(sent(p), { name: 't', arguments: { a: 1 }, _meta: { 'io.modelcontextprotocol/clientCapabilities': caps, progressToken: 7, traceparent: '00-x' } });
  });

  it('keeps the capabilities only for a request that may need input, and only when it declared some', () => {
    const meta = { 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } };
    assert.deepEqual(upstreamParams({ _meta: meta }, false), undefined);
    assert.deepEqual(upstreamParams({ _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } }), undefined);
    assert.deepEqual(sent(upstreamParams({ _meta: meta })), { _meta: meta });
  });

  it('sends no params when nothing is left', () => {
    assert.equal(upstreamParams({ _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }), undefined);
    assert.deepEqual(sent(upstreamParams({ cursor: 'c', _meta: 'not an object' })), { cursor: 'c' });
    assert.equal(upstreamParams({ requestState: 's', inputResponses: {} }), undefined);
    assert.deepEqual(sent(upstreamParams({ requestState: 's', cursor: 'c' })), { cursor: 'c' });
    assert.equal(JSON.stringify(upstreamParams({ name: 'n', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': 'v' } })), '{"name":"n","arguments":{}}');
  });
});

describe('shapeModernResponse', () => {
  it('fills resultType and serverInfo, and caching fields on cacheable results only (0 for a retry)', () => {
    const list = shapeModernResponse(call('tools/list'), { jsonrpc: '2.0', id: 1, result: { tools: [], _meta: { keep: true } } }, false, O);
    assert.deepEqual('result' in list && list.result, { tools: [], resultType: 'complete', _meta: { keep: true, 'io.modelcontextprotocol/serverInfo': O.serverInfo }, ttlMs: 5000, cacheScope: 'private' });
    const read = shapeModernResponse(call('resources/read'), { jsonrpc: '2.0', id: 1, result: { contents: [] } }, true, O);
    assert.equal('result' in read && read.result.ttlMs, 0);
    const tool = shapeModernResponse(call('tools/call'), { jsonrpc: '2.0', id: 1, result: { content: [], resultType: 'input_required' } }, false, O);
    assert.deepEqual('result' in tool && [tool.result.resultType, tool.result.ttlMs], ['input_required', undefined]);
  });

  it('turns -32002 into -32602 with the URI, and leaves other errors alone', () => {
    const r = shapeModernResponse(call('resources/read', { uri: 'a://b' }), { jsonrpc: '2.0', id: 1, error: { code: -32002, message: 'nope' } }, false, O);
    assert.deepEqual('error' in r && r.error, { code: -32602, message: 'nope', data: { uri: 'a://b' } });
    const other = { jsonrpc: '2.0' as const, id: 1, error: { code: -32603, message: 'x' } };
    assert.equal(shapeModernResponse(call('tools/call'), other, false, O), other);
  });

  it('writes the text a modern client receives (the shaped response, the shared serverInfo member included) and its length in bytes', () => {
    const cases = [
      shapeModernResponse(call('tools/call'), { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'a "quoted" \u2028 line' }] } }, false, O),
      shapeModernResponse(call('tools/call'), { jsonrpc: '2.0', id: 'x"y', result: {} }, false, O),
      shapeModernResponse(call('tools/call'), { jsonrpc: '2.0', id: 'é→😀', result: { content: [{ type: 'text', text: 'größer, \ud800 lone' }] } }, false, O),
      shapeModernResponse(call('tools/call'), { jsonrpc: '2.0', id: 5, result: { content: [] } }, false, { ...O, serverInfo: { name: 'Schaltzentrale für Werkzeuge', version: '1' } }),
      shapeModernResponse(call('tools/list'), { jsonrpc: '2.0', id: 2, result: { tools: [] } }, false, O),
      shapeModernResponse(call('tools/list'), { jsonrpc: '2.0', id: 3, result: { tools: [], _meta: { keep: true } } }, false, O),
      shapeModernResponse(call('resources/read', { uri: 'a://b' }), { jsonrpc: '2.0', id: 4, error: { code: -32002, message: 'nope' } }, false, O),
    ];
    for (const shaped of cases) {
      const before = structuredClone(shaped);
      const body = modernResponseBody(shaped);
      assert.deepEqual(JSON.parse(body.text), JSON.parse(JSON.stringify(shaped)));
      assert.equal(body.bytes, Buffer.byteLength(body.text), 'its Content-Length');
      assert.deepEqual(shaped, before, 'the response is left as it was');
    }
    // Results without a _meta of their own share one, which nothing can change.
    const [a, b] = [cases[0]!, cases[1]!].map((r) => 'result' in r && r.result._meta);
    assert.equal(a, b);
    assert.ok(Object.isFrozen(a));
  });
});


describe("shapeModernResponse: a 2026-07-28 upstream's own cache hints bound the gateway's", () => {
  const shaped = (limit: CacheLimit, o = { ...O, cacheScope: 'public' as const }) => {
    const r = shapeModernResponse(call('tools/list'), { jsonrpc: '2.0', id: 1, result: { tools: [] } }, false, { ...o, limit }) as { result: Record<string, unknown> };
    return [r.result.ttlMs, r.result.cacheScope];
  };
  it('the shortest ttlMs and the narrowest scope win; a hint that is not the era\'s reads as the strictest', () => {
    const limit = new CacheLimit();
    assert.deepEqual(shaped(limit), [5000, 'public'], 'no hint: the gateway\'s own');
    limit.narrow(60_000, 'public');
    assert.deepEqual(shaped(limit), [5000, 'public']);
    limit.narrow(1000, undefined);
    assert.deepEqual(shaped(limit), [1000, 'public']);
    limit.narrow(undefined, 'private');
    assert.deepEqual(shaped(limit), [1000, 'private']);
    const odd = new CacheLimit();
    odd.narrow(-5, 'shared');
    assert.deepEqual(shaped(odd), [0, 'private']);
    const fractional = new CacheLimit();
    fractional.narrow(1.5, undefined);
    assert.deepEqual(shaped(fractional), [0, 'public']);
  });
});
