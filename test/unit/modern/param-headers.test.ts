import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import { readModernRequest } from '../../../src/modern/modern-request.js';
import { paramHeaderCheck } from '../../../src/modern/param-headers.js';
import { invalidParamHeaders } from '../../../src/jsonrpc/param-headers.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const DEFINITION = {
  name: 'query',
  inputSchema: {
    type: 'object',
    properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, limit: { type: 'integer', 'x-mcp-header': 'Limit' }, text: { type: 'string' } },
  },
};

/** The check a tools/call of `query` gets, read from the request as the edge reads it. */
function checkOf(args: Record<string, unknown>, extra: IncomingHttpHeaders): (definition: Record<string, unknown>) => void {
  const headers: IncomingHttpHeaders = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'query', accept: 'application/json, text/event-stream', ...extra };
  const call = readModernRequest(headers, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'query', arguments: args, _meta: META } });
  return paramHeaderCheck(call.paramHeaders, call.params.arguments);
}

const mismatch = (why: RegExp) => (err: unknown) => (err as { code?: number }).code === -32020 && why.test((err as Error).message);

describe('Mcp-Param-* headers of a 2026-07-28 tools/call, checked against the tool definition', () => {
  it('passes when every annotated argument in the body has its header, equal after decoding', () => {
    checkOf({ region: 'eu-west', limit: 5, text: 'anything' }, { 'mcp-param-region': 'eu-west', 'mcp-param-limit': '5' })(DEFINITION);
    checkOf({ region: 'zürich' }, { 'mcp-param-region': `=?base64?${Buffer.from('zürich').toString('base64')}?=` })(DEFINITION);
    // An argument that is absent needs no header; a header the tool does not annotate is ignored.
    checkOf({ text: 'x' }, { 'mcp-param-region': 'unused', 'mcp-param-other': 'y' })(DEFINITION);
  });

  it('refuses a missing, malformed or different header with -32020', () => {
    assert.throws(() => checkOf({ region: 'eu-west' }, {})(DEFINITION), mismatch(/mcp-param-region header is required/));
    assert.throws(() => checkOf({ region: 'eu-west' }, { 'mcp-param-region': 'us-east' })(DEFINITION), mismatch(/does not match argument region/));
    assert.throws(() => checkOf({ limit: 5 }, { 'mcp-param-limit': '6' })(DEFINITION), mismatch(/does not match argument limit/));
    // Numbers compare as numbers, written as JSON writes them: not hex, binary, a leading + or 0, or Infinity.
    checkOf({ limit: 42 }, { 'mcp-param-limit': '42.0' })(DEFINITION);
    for (const odd of ['0x2A', '+42', '0b101010', '042', '42.', 'Infinity']) {
      assert.throws(() => checkOf({ limit: 42 }, { 'mcp-param-limit': odd })(DEFINITION), mismatch(/does not match argument limit/), odd);
    }
    assert.throws(() => checkOf({ region: 'a' }, { 'mcp-param-region': '=?base64?not base64?=' })(DEFINITION), mismatch(/malformed/));
  });

  it('reads the first value of a header the client repeated', () => {
    checkOf({ region: 'eu-west' }, { 'mcp-param-region': ['eu-west', 'us-east'] })(DEFINITION);
    assert.throws(() => checkOf({ region: 'eu-west' }, { 'mcp-param-region': ['us-east', 'eu-west'] })(DEFINITION), mismatch(/does not match/));
  });

  it('reads no headers for other methods', () => {
    const call = readModernRequest({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list', 'mcp-param-region': 'x' }, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: META } });
    assert.deepEqual({ ...call.paramHeaders }, {});
  });
});

describe('invalidParamHeaders: the x-mcp-header rules a tool definition must keep', () => {
  const prop = (type: string, header?: unknown) => (header === undefined ? { type } : { type, 'x-mcp-header': header });
  const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });

  it('accepts strings, integers and booleans, nested through properties alone, and tools with no annotation', () => {
    assert.equal(invalidParamHeaders(schema({ region: prop('string', 'Region'), n: prop('integer', 'N'), ok: prop('boolean', 'Ok') })), undefined);
    assert.equal(invalidParamHeaders(schema({ outer: { type: 'object', properties: { inner: prop('string', 'Inner') } } })), undefined);
    assert.equal(invalidParamHeaders(schema({ q: prop('string') })), undefined);
    assert.equal(invalidParamHeaders(undefined), undefined);
  });

  it('refuses a number, an object or an untyped property', () => {
    assert.match(String(invalidParamHeaders(schema({ count: prop('number', 'Count') }))), /"count".*not integer, string or boolean/);
    assert.match(String(invalidParamHeaders(schema({ o: prop('object', 'O') }))), /not integer, string or boolean/);
    assert.match(String(invalidParamHeaders(schema({ any: { 'x-mcp-header': 'Any' } }))), /null/);
  });

  it('refuses a name that is not an HTTP token: empty, spaces, CR/LF, non-ASCII, not a string', () => {
    for (const bad of ['', 'Bad Name', 'A\r\nSet-Cookie: x', 'Zürich', 'a:b', 42]) assert.match(String(invalidParamHeaders(schema({ p: prop('string', bad) }))), /not an HTTP field-name token/, JSON.stringify(bad));
  });

  it('refuses one name twice, whatever the case', () => {
    assert.match(String(invalidParamHeaders(schema({ a: prop('string', 'Zone'), b: prop('string', 'zone') }))), /used twice/);
  });

  it('refuses an annotation not reached through properties alone: items, compositions, $defs, the root', () => {
    assert.match(String(invalidParamHeaders(schema({ list: { type: 'array', items: prop('string', 'Item') } }))), /not reached/);
    assert.match(String(invalidParamHeaders(schema({ x: { anyOf: [prop('string', 'X')] } }))), /not reached/);
    assert.match(String(invalidParamHeaders({ ...schema({}), $defs: { d: prop('string', 'D') } })), /not reached/);
    assert.match(String(invalidParamHeaders({ ...schema({}), oneOf: [schema({ y: prop('string', 'Y') })] })), /not reached/);
    assert.match(String(invalidParamHeaders({ type: 'object', 'x-mcp-header': 'Root' })), /root/);
  });
});
