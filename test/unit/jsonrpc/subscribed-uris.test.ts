// The sub-resource rule (isSubResource) and its index (SubscribedUris): the index, which looks up an updated
// URI's parents, finds exactly the subscribed URIs the rule names, each once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSubResource, SubscribedUris } from '../../../src/jsonrpc/subscribed-uris.js';

describe('isSubResource', () => {
  it('is the URI itself, or a child by a path segment, a query or a fragment', () => {
    for (const uri of ['file:///docs', 'file:///docs/a.txt', 'file:///docs/a/b', 'file:///docs?page=2', 'file:///docs#top']) assert.ok(isSubResource(uri, 'file:///docs'), uri);
    assert.ok(isSubResource('file:///docs/a.txt', 'file:///docs/'), 'a parent ending in "/"');
    assert.ok(isSubResource('repo://r/x', 'repo://r/'));
  });

  it('is not a URI that merely begins with the same characters, a parent, or a dot segment out of it', () => {
    for (const uri of ['file:///docs2', 'file:///doc', 'file:///', 'file:///docs/../secret', 'file:///docs/%2E%2E/secret', 'file:///docs/./a', 'file:///docs/..']) assert.ok(!isSubResource(uri, 'file:///docs'), uri);
    assert.ok(!isSubResource('repo://ab', 'repo://a'));
  });
});

describe('SubscribedUris', () => {
  const subscribed = ['file:///docs', 'file:///docs/', 'file:///docs/a', 'file:///docs/a/', 'file:///d', 'a:/', 'a://', 'a://b', 'x?', 'file:///docs/a.txt'];
  const updates = ['file:///docs', 'file:///docs/a', 'file:///docs/a/b.txt', 'file:///docs//a', 'a://b/c', 'a:///', 'x?y', 'file:///docs?q', 'file:///docs/../x', 'file:///docs2', 'z', ''];

  it('finds every subscribed URI an update is a sub-resource of, each once', () => {
    const index = new SubscribedUris<string>();
    for (const s of subscribed) index.set(s, s);
    for (const u of updates) {
      const found: string[] = [];
      index.covering(u, (s) => found.push(s));
      assert.deepEqual(found.sort(), subscribed.filter((s) => isSubResource(u, s)).sort(), u);
      assert.equal(index.covers(u), found.length > 0, u);
    }
  });

  it('forgets what is deleted, and a length no longer subscribed', () => {
    const index = new SubscribedUris<number>();
    index.set('file:///docs', 1).set('file:///docs', 2).set('file:///dacs', 3);
    assert.equal(index.size, 2);
    index.delete('file:///docs');
    assert.ok(!index.covers('file:///docs/a'));
    assert.ok(index.covers('file:///dacs/a'));
    assert.ok(!index.delete('file:///docs'), 'deleted once');
    index.delete('file:///dacs');
    assert.ok(!index.covers('file:///dacs/a'));
    assert.equal(index.size, 0);
  });
});
