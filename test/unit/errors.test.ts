import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError, toJsonRpcError } from '../../src/errors.js';
import { JsonRpcError } from '../../src/jsonrpc/json-rpc-error.js';

function recorder() {
  const lines: Array<{ obj: Record<string, any>; msg: string }> = [];
  return { lines, log: { error: (obj: Record<string, unknown>, msg: string) => void lines.push({ obj, msg }) } };
}

describe('toJsonRpcError', () => {
  it('passes wire errors through and maps coded local errors, logging nothing', () => {
    const { lines, log } = recorder();
    const wire = new JsonRpcError(-32602, 'bad');
    assert.equal(toJsonRpcError(wire, log), wire);
    const mapped = toJsonRpcError(new GatewayError('SWB_RATE_LIMITED', 'slow down', { tenant: 't' }), log);
    assert.deepEqual(mapped.toObject(), { code: -32000, message: 'slow down', data: { code: 'SWB_RATE_LIMITED', tenant: 't' } });
    assert.deepEqual(lines, []);
  });

  it('turns anything else into -32603 with an incident id, logged at error level with the error and its stack', () => {
    const { lines, log } = recorder();
    const cause = new Error('secret internals');
    const err = toJsonRpcError(cause, log);
    assert.equal(err.code, -32603);
    const incident = (err.data as { incident: string }).incident;
    assert.match(incident, /^[0-9a-f-]{36}$/);
    assert.ok(!err.message.includes('secret'));
    assert.ok(err.message.includes(incident));
    assert.deepEqual(lines, [{ obj: { incident, err: cause }, msg: 'internal error answered with -32603' }]);
  });

  it('a local error the wire sees as internal gets an incident too; each incident is its own', () => {
    const { lines, log } = recorder();
    const a = toJsonRpcError(new GatewayError('SWB_NOT_ROUTABLE', 'no route'), log);
    const b = toJsonRpcError('a thrown string', log);
    assert.equal((a.data as Record<string, unknown>).code, 'SWB_NOT_ROUTABLE');
    assert.notEqual((a.data as Record<string, unknown>).incident, (b.data as Record<string, unknown>).incident);
    assert.deepEqual(lines[1]!.obj.err, { thrown: 'a thrown string' });
  });
});
