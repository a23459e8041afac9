import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forEachPage, pageParams } from '../../../src/jsonrpc/paging.js';
import { SESSION_PROTOCOL_VERSIONS } from '../../../src/jsonrpc/protocol-revisions.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../../src/session/protocol-versions.js';
import { UPSTREAM_PROTOCOL_VERSIONS } from '../../../src/upstream/upstream-client.js';

describe('forEachPage', () => {
  it('walks every page, passing each cursor on, until a page has no nextCursor', async () => {
    const asked: Array<string | undefined> = [];
    const seen: unknown[] = [];
    await forEachPage(
      async (cursor) => {
        asked.push(cursor);
        const n = cursor === undefined ? 0 : Number(cursor);
        return n < 2 ? { items: [n], nextCursor: String(n + 1) } : { items: [n] };
      },
      (page) => seen.push(...(page.items as number[])),
      10,
    );
    assert.deepEqual(asked, [undefined, '1', '2']);
    assert.deepEqual(seen, [0, 1, 2]);
  });

  it('stops after maxPages for a server that never stops handing out cursors', async () => {
    let pages = 0;
    await forEachPage(async () => ({ nextCursor: 'again' }), () => pages++, 5);
    assert.equal(pages, 5);
  });

  it('rejects with a failing page, after handing on the pages before it', async () => {
    const seen: number[] = [];
    await assert.rejects(
      forEachPage(async (c) => (c === undefined ? { n: 1, nextCursor: 'x' } : Promise.reject(new Error('down'))), (p) => seen.push(p.n as number), 5),
      /down/,
    );
    assert.deepEqual(seen, [1]);
  });

  it('sends a cursor only when there is one', () => {
    assert.equal(pageParams(undefined), undefined);
    assert.deepEqual(pageParams('c'), { cursor: 'c' });
  });
});

describe('protocol versions', () => {
  it('the gateway speaks the same revisions to clients and to upstreams, from one list', () => {
    assert.equal(SUPPORTED_PROTOCOL_VERSIONS, SESSION_PROTOCOL_VERSIONS);
    assert.equal(UPSTREAM_PROTOCOL_VERSIONS, SESSION_PROTOCOL_VERSIONS);
  });
});
