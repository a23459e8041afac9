// abortWith: a request's controller follows its transport's close for as long as the request runs, and
// no longer (see src/upstream/abort-link.ts for why not AbortSignal.any).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { abortWith, sharedAbortSignal } from '../../../src/upstream/abort-link.js';

describe('abortWith', () => {
  it('aborts the child with the parent’s reason while linked', () => {
    const parent = new AbortController();
    const child = new AbortController();
    abortWith(parent.signal, child);
    parent.abort(new Error('transport closed'));
    assert.equal(child.signal.aborted, true);
    assert.equal((child.signal.reason as Error).message, 'transport closed');
  });

  it('once unlinked, the parent’s abort leaves the child alone', () => {
    const parent = new AbortController();
    const child = new AbortController();
    abortWith(parent.signal, child)();
    parent.abort();
    assert.equal(child.signal.aborted, false);
  });

  it('a parent already aborted aborts the child at once', () => {
    const parent = new AbortController();
    parent.abort('gone');
    const child = new AbortController();
    abortWith(parent.signal, child)();
    assert.equal(child.signal.reason, 'gone');
  });

  it('the child aborting on its own does not touch the parent', () => {
    const parent = new AbortController();
    const child = new AbortController();
    const unlink = abortWith(parent.signal, child);
    child.abort();
    unlink();
    assert.equal(parent.signal.aborted, false);
  });

  it('a shared signal followed by 200 requests at once warns of no listener leak, and each is followed', () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const parent = sharedAbortSignal(new AbortController());
    const children = Array.from({ length: 200 }, () => new AbortController());
    const unlinks = children.map((c) => abortWith(parent.signal, c));
    unlinks.slice(0, 100).forEach((u) => u());
    parent.abort();
    assert.equal(children.filter((c) => c.signal.aborted).length, 100);
    // Node emits a warning on a later tick.
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        process.off('warning', onWarning);
        assert.deepEqual(warnings, []);
        resolve();
      }),
    );
  });
});
