import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuditRing } from '../../../src/admin/audit-ring.js';

type Line = Readonly<Record<string, unknown>>;

/** An audit log's tail: what the ring subscribes to. */
function fakeAudit() {
  const listeners = new Set<(l: Line) => void>();
  return {
    tail: (l: (line: Line) => void) => (listeners.add(l), () => void listeners.delete(l)),
    write: (n: number) => listeners.forEach((l) => l({ n })),
    get listening() {
      return listeners.size;
    },
  };
}

describe('AuditRing: the audit lines other replicas read', () => {
  it('subscribes on the first question only, then answers each asker from its own cursor', () => {
    const audit = fakeAudit();
    const ring = new AuditRing(audit.tail);
    audit.write(0);
    assert.equal(audit.listening, 0, 'nothing kept before anyone asks');
    const first = ring.since(undefined)!;
    assert.deepEqual(first, { lines: [], next: 0, dropped: 0 });
    audit.write(1);
    audit.write(2);
    const a = ring.since(first.next)!;
    assert.deepEqual(a.lines, [{ n: 1 }, { n: 2 }]);
    audit.write(3);
    assert.deepEqual(ring.since(a.next)!.lines, [{ n: 3 }]);
    assert.deepEqual(ring.since(first.next)!.lines, [{ n: 1 }, { n: 2 }, { n: 3 }], 'another asker, its own cursor');
    assert.deepEqual(ring.since('junk')!.lines, [], 'a cursor that is not one reads from now');
    ring.stop();
    assert.equal(audit.listening, 0);
  });

  it('is bounded: lines an asker did not read in time are counted as dropped', () => {
    const audit = fakeAudit();
    const ring = new AuditRing(audit.tail, 3);
    const { next } = ring.since(undefined)!;
    for (let i = 1; i <= 5; i++) audit.write(i);
    const b = ring.since(next)!;
    assert.deepEqual(b.lines, [{ n: 3 }, { n: 4 }, { n: 5 }]);
    assert.equal(b.dropped, 2);
    assert.equal(b.next, 5);
    ring.stop();
  });

  it('answers undefined when the audit log is off', () => {
    assert.equal(new AuditRing(() => undefined).since(undefined), undefined);
  });
});
