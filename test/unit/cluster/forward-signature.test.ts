import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ForwardSignature } from '../../../src/cluster/forward-signature.js';
import { SeenForwards } from '../../../src/cluster/seen-forwards.js';

const SECRET = 'a'.repeat(64);
const REQ = { method: 'POST', url: '/mcp', session: 's1', body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' };

describe('ForwardSignature', () => {
  const sig = new ForwardSignature(SECRET);
  const now = 1_800_000_000_000;

  it('verifies its own signature, for the replica it names, within ±30 s', () => {
    const h = new ForwardSignature(SECRET).sign('from1', 'to1', REQ, now);
    assert.match(h, /^v1,from1,to1,1800000000000,[0-9a-f]{64}$/);
    assert.deepEqual(new ForwardSignature(SECRET).verify(h, 'to1', REQ, now), { replica: 'from1' });
    // Each on a replica of its own (one believes a signature once).
    assert.deepEqual(new ForwardSignature(SECRET).verify(h, 'to1', REQ, now + 30_000), { replica: 'from1' });
    assert.deepEqual(new ForwardSignature(SECRET).verify(h, 'to1', REQ, now - 30_000), { replica: 'from1' });
  });

  it('believes a signature once: the same header and request again is replayed, for as long as it is not expired', () => {
    const owner = new ForwardSignature(SECRET);
    const h = new ForwardSignature(SECRET).sign('from1', 'to1', REQ, now);
    assert.deepEqual(owner.verify(h, 'to1', REQ, now), { replica: 'from1' });
    assert.deepEqual(owner.verify(h, 'to1', REQ, now), { untrusted: 'replayed' });
    assert.deepEqual(owner.verify(h, 'to1', REQ, now + 30_000), { untrusted: 'replayed' });
    assert.deepEqual(owner.verify(h, 'to1', REQ, now + 30_001), { untrusted: 'expired' });
    // A refusal for another reason records nothing: the header is still believed once where it belongs.
    const later = new ForwardSignature(SECRET).sign('from1', 'to1', REQ, now + 1_000);
    assert.deepEqual(owner.verify(later, 'to2', REQ, now + 1_000), { untrusted: 'misdirected' });
    assert.deepEqual(owner.verify(later, 'to1', { ...REQ, body: '{}' }, now + 1_000), { untrusted: 'bad-signature' });
    assert.deepEqual(owner.verify(later, 'to1', REQ, now + 1_000), { replica: 'from1' });
  });

  it('signs the same request to the same replica anew each time, in the same millisecond too: each is believed', () => {
    const signer = new ForwardSignature(SECRET);
    const owner = new ForwardSignature(SECRET);
    const headers = [0, 0, 0, 0, 0, 1, 1, 2, 9].map((d) => signer.sign('from1', 'to1', REQ, now + d));
    assert.equal(new Set(headers).size, headers.length, headers.join('\n'));
    for (const h of headers) assert.deepEqual(owner.verify(h, 'to1', REQ, now + 9), { replica: 'from1' }, h);
    // Once the clock has passed the repeats' times, signatures carry the clock's time again.
    assert.match(signer.sign('from1', 'to1', { ...REQ, body: '{}' }, now + 9), /^v1,from1,to1,1800000000009,/);
  });

  it('a memory of believed forwards kept across a change of secret', () => {
    const seen = new SeenForwards();
    const h = new ForwardSignature(SECRET).sign('from1', 'to1', REQ, now);
    assert.deepEqual(new ForwardSignature(SECRET, seen).verify(h, 'to1', REQ, now), { replica: 'from1' });
    assert.deepEqual(new ForwardSignature(SECRET, seen).verify(h, 'to1', REQ, now), { untrusted: 'replayed' });
  });

  it('refuses another secret, another request, a late or early one, another target, and junk', () => {
    const h = new ForwardSignature(SECRET).sign('from1', 'to1', REQ, now);
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

describe('SeenForwards', () => {
  const now = 1_800_000_000_000;

  it('remembers each MAC until it expires, then forgets it', () => {
    const seen = new SeenForwards();
    assert.equal(seen.first('a', now + 30_000, now), 'first');
    assert.equal(seen.first('a', now + 30_000, now + 30_000), 'replayed');
    assert.equal(seen.first('b', now + 60_000, now + 30_000), 'first');
    assert.equal(seen.size, 2);
    assert.equal(seen.first('c', now + 90_000, now + 30_001), 'first');
    assert.equal(seen.size, 2, 'a, expired, is gone');
  });

  it('full: refuses what is new (never forgets what is live), and takes new ones once entries expire', () => {
    const seen = new SeenForwards(3);
    // A long-lived first entry (a signer's clock ahead) holds expired ones behind it: a sweep finds them when full.
    assert.equal(seen.first('long', now + 60_000, now), 'first');
    assert.equal(seen.first('a', now + 30_000, now), 'first');
    assert.equal(seen.first('b', now + 30_000, now), 'first');
    assert.equal(seen.first('c', now + 30_000, now), 'full');
    assert.equal(seen.first('a', now + 30_000, now), 'replayed');
    assert.equal(seen.first('c', now + 30_000, now + 30_000), 'full');
    // Swept at most once a second (a sweep reads every entry).
    assert.equal(seen.first('c', now + 40_000, now + 30_001), 'full');
    assert.equal(seen.first('c', now + 40_000, now + 31_000), 'first');
    assert.equal(seen.size, 2);
    assert.equal(seen.first('long', now + 60_000, now + 31_000), 'replayed');
  });
});
