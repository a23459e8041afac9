import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { replayable } from '../../../src/cluster/replayable.js';

const req = (method: string, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params: {} });

describe('replayable: what may run again after the replica that had it died', () => {
  it('idempotent requests by the method table, alone or batched', () => {
    assert.equal(replayable('POST', JSON.stringify(req('tools/list'))), true);
    assert.equal(replayable('POST', JSON.stringify(req('resources/read'))), true);
    assert.equal(replayable('POST', JSON.stringify([req('ping'), req('prompts/get', 2)])), true);
  });
  it('never a call that may act, nor a batch that holds one', () => {
    assert.equal(replayable('POST', JSON.stringify(req('tools/call'))), false);
    assert.equal(replayable('POST', JSON.stringify([req('tools/list'), req('tools/call', 2)])), false);
    assert.equal(replayable('POST', JSON.stringify(req('no/such-method'))), false);
  });
  it('notifications and responses: twice changes nothing', () => {
    assert.equal(replayable('POST', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })), true);
    assert.equal(replayable('POST', JSON.stringify({ jsonrpc: '2.0', id: 7, result: {} })), true);
  });
  it('nothing on a guess: unreadable bodies, empty batches, other methods', () => {
    assert.equal(replayable('POST', '{not json'), false);
    assert.equal(replayable('POST', '[]'), false);
    assert.equal(replayable('POST', '42'), false);
    assert.equal(replayable('POST', undefined), false);
    assert.equal(replayable('PUT', JSON.stringify(req('ping'))), false);
  });
  it('opening a stream or ending a session', () => {
    assert.equal(replayable('GET', undefined), true);
    assert.equal(replayable('DELETE', undefined), true);
  });
});
