import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ForwardSignature } from '../../../src/cluster/forward-signature.js';

const SECRET = 'a'.repeat(64);
const REQ = { method: 'POST', url: '/mcp', session: 's1', body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' };

describe('ForwardSignature', () => {
  const sig = new ForwardSignature(SECRET);
  const now = 1_800_000_000_000;

  it('verifies its own signature, for the replica it names, within ±30 s', () => {
    const h = sig.sign('from1', 'to1', REQ, now);
    assert.match(h, /^v1,from1,to1,1800000000000,[0-9a-f]{64}$/);
    assert.deepEqual(sig.verify(h, 'to1', REQ, now), { replica: 'from1' });
    assert.deepEqual(sig.verify(h, 'to1', REQ, now + 30_000), { replica: 'from1' });
    assert.deepEqual(sig.verify(h, 'to1', REQ, now - 30_000), { replica: 'from1' });
  });

  it('refuses another secret, another request, a late or early one, another target, and junk', () => {
    const h = sig.sign('from1', 'to1', REQ, now);
    assert.deepEqual(new ForwardSignature('b'.repeat(64)).verify(h, 'to1', REQ, now), { untrusted: 'bad-signature' });
    for (const changed of [{ ...REQ, body: '{}' }, { ...REQ, url: '/mcp/other' }, { ...REQ, method: 'GET' }, { ...REQ, session: 's2' }, { ...REQ, session: undefined }]) {
      assert.deepEqual(sig.verify(h, 'to1', changed, now), { untrusted: 'bad-signature' });
    }
    assert.deepEqual(sig.verify(h, 'to1', REQ, now + 30_001), { untrusted: 'expired' });
    assert.deepEqual(sig.verify(h, 'to1', REQ, now - 30_001), { untrusted: 'expired' });
    assert.deepEqual(sig.verify(h, 'to2', REQ, now), { untrusted: 'misdirected' });
    // The ids are signed: the same MAC under other names does not verify.
    const [, , , at, mac] = h.split(',');
    assert.deepEqual(sig.verify(`v1,from2,to1,${at},${mac}`, 'to1', REQ, now), { untrusted: 'bad-signature' });
    for (const junk of ['', 'v1', 'v2,from1,to1,1,' + '0'.repeat(64), `v1,from1,to1,soon,${mac}`, `v1,from1,to1,${at},${mac!.slice(1)}`, `v1,from1,to1,${at},${mac!.toUpperCase()}`]) {
      assert.deepEqual(sig.verify(junk, 'to1', REQ, now), { untrusted: 'malformed' }, junk);
    }
  });
});
