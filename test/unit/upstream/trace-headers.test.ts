import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GATEWAY_TRACE_CONTEXT, traceHeaders } from '../../../src/upstream/http-headers.js';

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
/** A request whose _meta the gateway's span wrote (upstream-span.ts marks it). */
const msg = (meta: object) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', _meta: { ...meta, [GATEWAY_TRACE_CONTEXT]: true } } });

describe('trace headers for remote upstreams', () => {
  it('mirrors a well-formed context from params._meta', () => {
    assert.deepEqual(traceHeaders(msg({ traceparent: TP, tracestate: 'rojo=00f067aa0ba902b7', baggage: 'k=v', progressToken: 3 })), { traceparent: TP, tracestate: 'rojo=00f067aa0ba902b7', baggage: 'k=v' });
  });

  it('sends nothing that could break or smuggle a header', () => {
    assert.equal(traceHeaders(msg({ traceparent: `${TP}\r\nx-injected: 1` })), undefined);
    assert.equal(traceHeaders(msg({ traceparent: 'not-a-traceparent' })), undefined);
    assert.equal(traceHeaders(msg({ traceparent: 42 })), undefined);
    assert.deepEqual(traceHeaders(msg({ traceparent: TP, tracestate: 'a=b\nc: d', baggage: 'é=1' })), { traceparent: TP });
    assert.equal(traceHeaders({ jsonrpc: '2.0', method: 'notifications/initialized' }), undefined);
  });

  it("mirrors nothing the gateway did not write: a client's own _meta context stays in _meta", () => {
    const client = { traceparent: TP, tracestate: 'rojo=00f067aa0ba902b7', baggage: 'k=v' };
    assert.equal(traceHeaders({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', _meta: client } }), undefined);
    assert.equal(traceHeaders({ jsonrpc: '2.0', method: 'notifications/progress', params: { _meta: client } }), undefined);
  });
});
